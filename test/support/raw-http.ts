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
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  socket.write(request);
  await once(socket, 'close');
  const text = Buffer.concat(chunks);
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
