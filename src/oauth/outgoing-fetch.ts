import { request, type RequestOptions } from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import { isPublicAddress } from '../domain/public-address.js';
import { lookupPublicOnly } from '../net/public-lookup.js';

/**
 * oidc-provider's `fetch`, with which it gets Client ID Metadata Documents. The provider's own guard checks a socket's
 * address once connected, so a `client_id` on an inside address still opened a connection there; here the address is
 * checked before connecting: an IP in the URL at once, a name's every address when it is resolved. `allowPrivate`
 * (tests) skips the check.
 */
export function createOutgoingFetch(options: { allowPrivate: boolean }) {
  return async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input);
    const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!options.allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) {
      throw new Error(`${literal} is not a public address`);
    }
    const requestOptions: RequestOptions = {
      method: init.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init.headers)),
      signal: init.signal ?? undefined,
      // A socket of its own each time, so that every connection is made through the check (no pooled one is reused).
      agent: false,
      ...(options.allowPrivate ? {} : { lookup: lookupPublicOnly }),
    };
    return new Promise((settle, fail) => {
      const sent = request(url, requestOptions, (response) => {
        const status = response.statusCode ?? 502;
        // Only a 200's body is read: the provider refuses every other status, and some (204, 304) may have none.
        if (status !== 200) response.destroy();
        // Anything a document's server sends must end in this promise: a throw here (a Response takes statuses 200-599
        // only, Node's parser 100-999) would be uncaught and end the process.
        try {
          const headers = new Headers();
          for (let index = 0; index < response.rawHeaders.length; index += 2) {
            headers.append(response.rawHeaders[index]!, response.rawHeaders[index + 1]!);
          }
          const body = status === 200 ? (Readable.toWeb(response) as ReadableStream<Uint8Array>) : null;
          settle(new Response(body, { status: status >= 200 && status <= 599 ? status : 502, headers }));
        } catch (error) {
          fail(error);
        }
      });
      sent.on('error', fail);
      sent.end();
    });
  };
}
