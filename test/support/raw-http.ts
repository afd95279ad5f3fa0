import { once } from 'node:events';
import { connect } from 'node:net';

/** An answer read off the socket: status, lower-cased headers and the body's bytes as sent. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * Sends request bytes as they are, with nothing added (no Host unless the bytes carry it), optionally holding the
 * socket open without finishing the request, and reads the answer until the server closes the connection.
 */
export async function rawRequest(port: number, request: string | Buffer): Promise<RawAnswer> {
  return (await rawRequestSentSlowly(port, request, [], 0)).answer;
}

/**
 * Sends a request's head, then the pieces of its body `gapMs` apart, and holds the socket open after the last piece
 * (a body that stalls) or until the server closes the connection (one that trickles); reads the answer until then.
 * Says how long after the head the answer's first byte came, and the connection closed.
 */
export async function rawRequestSentSlowly(
  port: number,
  head: string | Buffer,
  pieces: readonly string[],
  gapMs: number,
): Promise<{ answer: RawAnswer; answeredAfterMs: number; closedAfterMs: number }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  const sentAt = performance.now();
  let answeredAfterMs = Number.NaN;
  socket.on('data', (chunk: Buffer) => {
    if (chunks.length === 0) answeredAfterMs = performance.now() - sentAt;
    chunks.push(chunk);
  });
  socket.on('error', () => undefined);
  socket.write(head);
  const queue = [...pieces];
  const timer = setInterval(() => {
    const piece = queue.shift();
    if (piece === undefined || socket.destroyed) return void clearInterval(timer);
    socket.write(piece);
  }, gapMs);
  await once(socket, 'close');
  clearInterval(timer);
  return { answer: parseAnswer(Buffer.concat(chunks)), answeredAfterMs, closedAfterMs: performance.now() - sentAt };
}

function parseAnswer(text: Buffer): RawAnswer {
  const end = text.indexOf('\r\n\r\n');
  const [statusLine = '', ...lines] = text.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    headers[name] = headers[name] === undefined ? line.slice(colon + 1).trim() : `${headers[name]}, ${line.slice(colon + 1).trim()}`;
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]), headers, body: text.subarray(end + 4) };
}
