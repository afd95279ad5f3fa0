import type { FastifyInstance } from 'fastify';
import { XMLParser } from 'fast-xml-parser';

/** What a test sends to the address book: a key (as Basic, the way address book clients send it, unless `bearer`). */
export interface DavRequest {
  method: string;
  url: string;
  key?: string | null;
  bearer?: boolean;
  body?: string;
  headers?: Record<string, string | undefined>;
}

export function basic(key: string, user = 'someone@example.com'): string {
  return `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;
}

/** One request through `inject`, XML bodies as application/xml. */
export function davRequest(app: FastifyInstance, request: DavRequest) {
  const { key = null, bearer = false, body, headers = {} } = request;
  const authorization = key === null ? {} : { authorization: bearer ? `Bearer ${key}` : basic(key) };
  const contentType = body === undefined ? {} : { 'content-type': 'application/xml; charset=utf-8' };
  const sent = Object.fromEntries(
    Object.entries({ ...authorization, ...contentType, ...headers }).filter(([, value]) => value !== undefined),
  );
  return app.inject({ method: request.method as 'GET', url: request.url, headers: sent as Record<string, string>, body });
}

export const PROPFIND_BODY = (...props: string[]) =>
  `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:carddav" xmlns:CS="http://calendarserver.org/ns/"><D:prop>${props.join('')}</D:prop></D:propfind>`;

/** A response of a multistatus, read independently of the server's own XML code: prefixes dropped, texts kept. */
export interface DavResponse {
  href: string;
  /** The status of a response without propstat (a gone member), else null. */
  status: string | null;
  /** Properties found (200), by local name: their text, or the element's content as an object. */
  props: Record<string, unknown>;
  /** Properties the resource lacks (404), by local name. */
  missing: string[];
}

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  // Character references (&#13; keeps a card's CRLF) are decoded, as every XML parser does.
  htmlEntities: true,
  isArray: (name) => ['response', 'propstat', 'href'].includes(name),
});

export function readMultistatus(text: string): { responses: DavResponse[]; syncToken: string | null } {
  const document = parser.parse(text) as { multistatus: { response?: Record<string, unknown>[]; 'sync-token'?: string } };
  const responses = (document.multistatus.response ?? []).map((response): DavResponse => {
    const props: Record<string, unknown> = {};
    const missing: string[] = [];
    for (const propstat of (response.propstat ?? []) as { prop: Record<string, unknown>; status: string }[]) {
      for (const [name, value] of Object.entries(propstat.prop ?? {})) {
        if (propstat.status.includes(' 200 ')) props[name] = value;
        else missing.push(name);
      }
    }
    return { href: (response.href as string[])[0]!, status: (response.status as string | undefined) ?? null, props, missing };
  });
  return { responses, syncToken: document.multistatus['sync-token'] ?? null };
}
