import type { IncomingMessage } from 'node:http';

export const SEVERAL_HOSTS_MESSAGE = 'A request must carry one Host header; this one carries several';
export const MISSING_HOST_MESSAGE = 'An HTTP/1.1 request must carry a Host header';

/**
 * RFC 9112 §3.2: an HTTP/1.1 request must carry exactly one Host header, and a server must answer 400 to one that
 * carries none or several (two Hosts are how request smuggling and cache poisoning start). Null when it is fine.
 */
export function hostRefusal(request: IncomingMessage): string | null {
  let hosts = 0;
  for (let i = 0; i < request.rawHeaders.length; i += 2) {
    if (request.rawHeaders[i]!.toLowerCase() === 'host') hosts += 1;
  }
  if (hosts > 1) return SEVERAL_HOSTS_MESSAGE;
  if (hosts === 0 && request.httpVersion === '1.1') return MISSING_HOST_MESSAGE;
  return null;
}
