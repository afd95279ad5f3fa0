import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { REQUEST_TIMEOUT_MESSAGE } from './errors.js';
import { API_CONTENT_SECURITY_POLICY } from './plugins/security-headers.js';

export const HEADERS_TOO_LARGE_MESSAGE = 'Request line and headers too large: at most 16 KB together';

/** What Node's HTTP parser refuses before any route sees a request, and how each is answered. */
const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: HEADERS_TOO_LARGE_MESSAGE },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: REQUEST_TIMEOUT_MESSAGE },
};
export const MALFORMED_REQUEST_MESSAGE = 'Malformed HTTP request';
const MALFORMED = { status: 400, message: MALFORMED_REQUEST_MESSAGE };

/**
 * Fastify's `clientErrorHandler`: oversized request lines and headers (431), requests not received in
 * time (408: slow clients) and unparseable requests (400) get the same `{ error }` JSON body as every
 * other error, and the connection is closed.
 */
export function handleClientError(error: Error & { code?: string }, socket: Duplex): void {
  // The peer is gone: nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = CLIENT_ERRORS[error.code ?? ''] ?? MALFORMED;
  if (socket.writable) {
    const body = JSON.stringify({ error: message });
    socket.write(
      [
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
        'Content-Type: application/json; charset=utf-8',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Cache-Control: no-store',
        'X-Content-Type-Options: nosniff',
        `Content-Security-Policy: ${API_CONTENT_SECURITY_POLICY}`,
        'Connection: close',
        '',
        body,
      ].join('\r\n'),
    );
  }
  socket.destroy();
}
