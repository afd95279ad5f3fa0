import { InputError } from '../../domain/errors.js';
import { numberedLines, type TextChunks } from '../text-chunks.js';

/** One content line of a vCard, e.g. `item1.EMAIL;TYPE=work,pref:ada@example.com`. */
export interface VcardProperty {
  /** Upper-case, without the group (`item1.`). */
  name: string;
  /** Upper-case parameter names; each value list as written, without quotes. */
  params: Map<string, string[]>;
  /** Quoted-printable already decoded; backslash escapes still in place, as structured values need them. */
  value: string;
}

export interface Vcard {
  /** `card N (line L)`, where L is the line of its BEGIN:VCARD. */
  label: string;
  properties: VcardProperty[];
}

interface ContentLine {
  text: string;
  line: number;
}

const BARE_ENCODINGS = ['QUOTED-PRINTABLE', 'BASE64', '8BIT', '7BIT'];

/** Splits vCard text (2.1, 3.0 or 4.0) into cards of properties, card by card; blank text holds none. */
export async function* readVcards(text: TextChunks): AsyncGenerator<Vcard> {
  let card: Vcard | null = null;
  let cards = 0;
  for await (const { text: content, line } of contentLines(text)) {
    const marker = /^(BEGIN|END):VCARD$/i.exec(content.trim())?.[1]?.toUpperCase();
    if (card === null) {
      if (marker !== 'BEGIN') throw new InputError(`line ${line}: expected BEGIN:VCARD, found "${excerpt(content)}"`);
      card = { label: `card ${cards + 1} (line ${line})`, properties: [] };
    } else if (marker === 'END') {
      cards++;
      yield card;
      card = null;
    } else if (marker === 'BEGIN') {
      throw new InputError(`${card.label}: no END:VCARD before the BEGIN:VCARD at line ${line}`);
    } else {
      card.properties.push(parseProperty(content, `line ${line} (card ${cards + 1})`));
    }
  }
  if (card !== null) throw new InputError(`${card.label}: no END:VCARD before the end of the file`);
}

/**
 * Joins folded lines (a line break followed by a space or tab) and quoted-printable soft line breaks
 * (a value ending in `=`), keeping the number of the line each content line starts on. Drops blank lines.
 */
async function* contentLines(text: TextChunks): AsyncGenerator<ContentLine> {
  let last: ContentLine | null = null;
  for await (const { text: physical, number } of numberedLines(text)) {
    if (last !== null && endsWithSoftBreak(last.text)) last.text = last.text.slice(0, -1) + physical;
    else if (last !== null && /^[ \t]/.test(physical)) last.text += physical.slice(1);
    else {
      if (last !== null && last.text.trim() !== '') yield last;
      last = { text: physical, line: number };
    }
  }
  if (last !== null && last.text.trim() !== '') yield last;
}

function endsWithSoftBreak(content: string): boolean {
  if (!content.endsWith('=')) return false;
  const split = splitContentLine(content);
  return split !== null && isQuotedPrintable(parseParams(split.params));
}

/** `where` names the line for errors: `line 12 (card 2)`. */
function parseProperty(content: string, where: string): VcardProperty {
  const split = splitContentLine(content);
  const name = split?.name.slice(split.name.indexOf('.') + 1).toUpperCase() ?? '';
  if (split === null || !/^[A-Z0-9_-]+$/.test(name)) {
    throw new InputError(`${where}: expected a property such as "EMAIL:…", found "${excerpt(content)}"`);
  }
  const params = parseParams(split.params);
  const value = isQuotedPrintable(params) ? decodeQuotedPrintable(split.value, params, where) : split.value;
  return { name, params, value };
}

/** `group.NAME;params:value` split at the first `;` and the first `:` that are outside double quotes. */
function splitContentLine(content: string): { name: string; params: string[]; value: string } | null {
  const head: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < content.length; i++) {
    const char = content[i];
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === ';' || char === ':')) {
      head.push(content.slice(start, i));
      start = i + 1;
      if (char === ':') {
        const [name = '', ...params] = head;
        return { name, params, value: content.slice(start) };
      }
    }
  }
  return null;
}

function parseParams(params: string[]): Map<string, string[]> {
  const parsed = new Map<string, string[]>();
  for (const param of params) {
    const equals = param.indexOf('=');
    const [name, values] =
      equals >= 0
        ? [param.slice(0, equals).trim().toUpperCase(), splitParamValues(param.slice(equals + 1))]
        : [bareParamName(param.trim()), [param.trim()]];
    parsed.set(name, [...(parsed.get(name) ?? []), ...values]);
  }
  return parsed;
}

/** vCard 2.1 writes parameters without a name (`TEL;CELL;PREF:`): encodings, or else types. */
function bareParamName(value: string): string {
  return BARE_ENCODINGS.includes(value.toUpperCase()) ? 'ENCODING' : 'TYPE';
}

/** `work,pref` and 4.0's quoted `"voice,cell"` are both lists. */
function splitParamValues(text: string): string[] {
  return text
    .replaceAll('"', '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value !== '');
}

function isQuotedPrintable(params: Map<string, string[]>): boolean {
  return params.get('ENCODING')?.some((encoding) => encoding.toUpperCase() === 'QUOTED-PRINTABLE') ?? false;
}

function decodeQuotedPrintable(value: string, params: Map<string, string[]>, where: string): string {
  const charset = params.get('CHARSET')?.[0] ?? 'UTF-8';
  const bytes = Buffer.concat(
    value
      .split(/(=[0-9A-Fa-f]{2})/)
      .map((part) => (/^=[0-9A-Fa-f]{2}$/.test(part) ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(part))),
  );
  return textDecoder(charset, where).decode(bytes).replace(/\r\n?/g, '\n');
}

function textDecoder(charset: string, where: string) {
  try {
    return new TextDecoder(charset);
  } catch {
    throw new InputError(`${where}: unknown CHARSET "${charset}"`);
  }
}

function excerpt(content: string): string {
  return content.length > 40 ? `${content.slice(0, 40)}…` : content;
}

/** Splits a value at separators not escaped by a backslash (`;` for N, ADR and ORG; `,` for CATEGORIES). */
export function splitValue(value: string, separator: ';' | ','): string[] {
  const parts: string[] = [];
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    if (value[i] === '\\') i++;
    else if (value[i] === separator) {
      parts.push(value.slice(start, i));
      start = i + 1;
    }
  }
  return [...parts, value.slice(start)];
}

/** Resolves `\n`, `\N`, `\,`, `\;`, `\\` and Google's `\:`; other backslashes stay as written. */
export function unescapeValue(value: string): string {
  return value.replace(/\\([nN,;:\\])/g, (_, char: string) => (char === 'n' || char === 'N' ? '\n' : char));
}
