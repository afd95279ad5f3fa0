import { InputError } from '../domain/errors.js';

/** Text as it arrives: from a file or a request body in chunks, or whole (a string in an array). */
export type TextChunks = Iterable<string> | AsyncIterable<string>;

/** A line of text without its line break, numbered from 1. */
export interface NumberedLine {
  text: string;
  number: number;
}

/**
 * Decodes UTF-8 bytes chunk by chunk, a character split between chunks included; a leading byte order mark is
 * dropped. InputError `cannot read <source>: it is not UTF-8 text` at the first byte that is not UTF-8.
 */
export async function* utf8Text(bytes: AsyncIterable<Uint8Array>, source: string): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
    } catch {
      throw new InputError(`cannot read ${source}: it is not UTF-8 text`);
    }
  };
  for await (const chunk of bytes) yield decode(chunk);
  yield decode();
}

/** The text with every line break (CRLF, CR or LF) written LF; a CR that ends a chunk waits for the next one. */
export async function* withLfBreaks(text: TextChunks): AsyncGenerator<string> {
  let pendingCr = false;
  for await (const chunk of text) {
    if (chunk === '') continue;
    const whole: string = pendingCr ? `\r${chunk}` : chunk;
    pendingCr = whole.endsWith('\r');
    yield (pendingCr ? whole.slice(0, -1) : whole).replace(/\r\n?/g, '\n');
  }
  if (pendingCr) yield '\n';
}

/** The lines of the text, as `split` at its line breaks (CRLF, CR or LF) gives them, without holding the whole text. */
export async function* numberedLines(text: TextChunks): AsyncGenerator<NumberedLine> {
  // A long line's pieces wait in a list: joining them at each chunk would rescan the line once per chunk.
  let pieces: string[] = [];
  let number = 0;
  for await (const chunk of withLfBreaks(text)) {
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      pieces.push(chunk.slice(start, end));
      yield { text: pieces.join(''), number: ++number };
      pieces = [];
      start = end + 1;
    }
    pieces.push(chunk.slice(start));
  }
  yield { text: pieces.join(''), number: number + 1 };
}
