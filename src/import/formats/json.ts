import { InputError } from '../../domain/errors.js';
import { withLfBreaks, type TextChunks } from '../text-chunks.js';
import { describeJsonError } from './json-error.js';
import { asFields, type RawRecord } from './raw-record.js';

/**
 * A JSON array of contact objects, labelled `record N`, read one element at a time: only the element being read is
 * held. Blank text holds no records. A syntax error names its line and column when known.
 */
export async function* readJsonRecords(text: TextChunks): AsyncGenerator<RawRecord> {
  const scanner = new ArrayScanner();
  for await (const chunk of withLfBreaks(text)) {
    for (const element of scanner.scan(chunk)) {
      const label = `record ${element.number}`;
      yield { label, fields: asFields(element.value, label) };
    }
  }
  scanner.end();
}

interface Place {
  line: number;
  column: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const isJsonSpace = (code: number): boolean => code === 0x20 || code === 0x09 || code === NEWLINE || code === 0x0d;

/**
 * Splits the text of a top-level array into its elements' texts, chunk by chunk, and parses each with JSON.parse: an
 * element ends at a `,` or `]` outside strings and brackets. Where an element's own text is not JSON, JSON.parse says
 * why; the array's punctuation is checked here.
 */
class ArrayScanner {
  private phase: 'before' | 'inside' | 'after' = 'before';
  private readonly at: Place = { line: 1, column: 1 };
  private elementStart: Place = { line: 1, column: 1 };
  private pieces: string[] = [];
  private hasContent = false;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private elements = 0;
  private afterComma = false;

  *scan(chunk: string): Generator<{ number: number; value: unknown }> {
    let sliceStart = 0;
    for (let i = 0; i < chunk.length; i++) {
      const code = chunk.charCodeAt(i);
      if (this.phase === 'inside') {
        if (this.inString) {
          if (this.escaped) this.escaped = false;
          else if (code === BACKSLASH) this.escaped = true;
          else if (code === QUOTE) this.inString = false;
        } else if (code === QUOTE) {
          this.inString = true;
          this.hasContent = true;
        } else if (OPENERS.has(code)) {
          this.depth++;
          this.hasContent = true;
        } else if (this.depth > 0 && (code === CLOSE_ARRAY || code === CLOSE_OBJECT)) {
          this.depth--;
        } else if (this.depth === 0 && (code === COMMA || code === CLOSE_ARRAY)) {
          this.pieces.push(chunk.slice(sliceStart, i));
          const element = this.endElement(code);
          if (element !== null) yield element;
          sliceStart = i + 1;
          this.afterComma = code === COMMA;
          if (code === CLOSE_ARRAY) this.phase = 'after';
          this.advance(code);
          this.elementStart = { ...this.at };
          continue;
        } else if (!isJsonSpace(code)) {
          this.hasContent = true;
        }
      } else if (!isJsonSpace(code)) {
        if (this.phase === 'after') throw syntaxError('Unexpected non-whitespace character after JSON', this.at);
        if (code !== OPEN_ARRAY) throw new InputError('expected a JSON array of contact objects');
        this.phase = 'inside';
        sliceStart = i + 1;
        this.advance(code);
        this.elementStart = { ...this.at };
        continue;
      }
      this.advance(code);
    }
    if (this.phase === 'inside') this.pieces.push(chunk.slice(sliceStart));
  }

  /** The end of the text: an array left open is refused, with the error its last element's text gives, if any. */
  end(): void {
    if (this.phase !== 'inside') return;
    if (this.hasContent) {
      this.parseElement();
      throw syntaxError("Expected ',' or ']' after array element", this.at);
    }
    throw syntaxError('Unexpected end of JSON input', this.at);
  }

  private advance(code: number): void {
    if (code === NEWLINE) {
      this.at.line++;
      this.at.column = 1;
    } else {
      this.at.column++;
    }
  }

  /** The element the `,` or `]` at this.at ends, or null for the `]` of an empty array. */
  private endElement(delimiter: number): { number: number; value: unknown } | null {
    if (!this.hasContent) {
      const emptyArray = delimiter === CLOSE_ARRAY && this.elements === 0 && !this.afterComma;
      if (emptyArray) return null;
      throw syntaxError(`Unexpected token '${String.fromCharCode(delimiter)}'`, this.at);
    }
    const value = this.parseElement();
    this.pieces = [];
    this.hasContent = false;
    return { number: ++this.elements, value };
  }

  private parseElement(): unknown {
    const text = this.pieces.join('');
    try {
      return JSON.parse(text);
    } catch (error) {
      const { reason, position } = describeJsonError(error);
      if (position === null) throw new InputError(`invalid JSON: ${reason}`);
      throw syntaxError(reason, placeIn(text, position, this.elementStart));
    }
  }
}

/** Where the character at `position` of `text` is, given where the text starts. */
function placeIn(text: string, position: number, start: Place): Place {
  const before = text.slice(0, position);
  const lastBreak = before.lastIndexOf('\n');
  if (lastBreak === -1) return { line: start.line, column: start.column + position };
  return { line: start.line + before.split('\n').length - 1, column: position - lastBreak };
}

function syntaxError(reason: string, { line, column }: Place): InputError {
  return new InputError(`invalid JSON at line ${line} column ${column}: ${reason}`);
}
