import { Readable } from 'node:stream';
import { CALENDARSERVER_NS, CARDDAV_NS, DAV_NS } from './namespaces.js';

/** A property (or any element) by namespace URI and local name. */
export interface XmlName {
  namespace: string;
  name: string;
}

/** The prefixes every answer declares on its document element; an element of another namespace declares its own. */
const PREFIXES: ReadonlyMap<string, string> = new Map([
  [DAV_NS, 'd'],
  [CARDDAV_NS, 'card'],
  [CALENDARSERVER_NS, 'cs'],
]);
const DECLARATIONS = [...PREFIXES].map(([namespace, prefix]) => ` xmlns:${prefix}="${escapeXml(namespace)}"`).join('');

export const XML_CONTENT_TYPE = 'application/xml; charset=utf-8';

/**
 * The one escape of every text and attribute value an answer writes. A carriage return is written as a character
 * reference, or XML's end-of-line handling would turn a card's CRLF into LF for the client (XML 1.0 §2.11).
 */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"'\r]/g, (char) => ENTITIES[char]!);
}
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#13;' };

export const dav = (name: string): XmlName => ({ namespace: DAV_NS, name });
export const carddav = (name: string): XmlName => ({ namespace: CARDDAV_NS, name });
export const calendarServer = (name: string): XmlName => ({ namespace: CALENDARSERVER_NS, name });

/**
 * `<prefix:name>inner</prefix:name>`, or an empty element when `inner` is empty. `inner` is XML this module's functions
 * built (or escapeXml's text). Names come from this code or from a request body the XML parser accepted.
 */
export function element({ namespace, name }: XmlName, inner = ''): string {
  const prefix = PREFIXES.get(namespace);
  const [tag, declaration] =
    prefix === undefined
      ? namespace === ''
        ? [name, '']
        : [`x:${name}`, ` xmlns:x="${escapeXml(namespace)}"`]
      : [`${prefix}:${name}`, ''];
  return inner === '' ? `<${tag}${declaration}/>` : `<${tag}${declaration}>${inner}</${tag}>`;
}

/** An element holding text. */
export const textElement = (name: XmlName, text: string): string => element(name, escapeXml(text));

export const hrefElement = (path: string): string => textElement(dav('href'), path);

const STATUS_TEXT: Record<number, string> = { 200: 'OK', 404: 'Not Found', 507: 'Insufficient Storage' };
const statusElement = (status: number): string => textElement(dav('status'), `HTTP/1.1 ${status} ${STATUS_TEXT[status]}`);

/** A property's name and the XML inside it. */
export type FoundProperty = readonly [XmlName, string];

/** One `<d:response>` with the properties found (200) and those the resource does not have (404). */
export function propertiesResponse(path: string, found: readonly FoundProperty[], missing: readonly XmlName[]): string {
  const propstat = (props: string, status: number) => element(dav('propstat'), element(dav('prop'), props) + statusElement(status));
  const parts = [hrefElement(path)];
  if (found.length > 0) parts.push(propstat(found.map(([name, inner]) => element(name, inner)).join(''), 200));
  if (missing.length > 0) parts.push(propstat(missing.map((name) => element(name)).join(''), 404));
  return element(dav('response'), parts.join(''));
}

/** A `<d:response>` of a status alone: a member that is gone (404), a truncated answer (507). */
export function statusResponse(path: string, status: number): string {
  return element(dav('response'), hrefElement(path) + statusElement(status));
}

/** `<d:error>` with its precondition, the body of a refusal (RFC 4918 §16). */
export function errorDocument(condition: XmlName): string {
  return `<?xml version="1.0" encoding="utf-8"?>\n<d:error${DECLARATIONS}>${element(condition)}</d:error>\n`;
}

/** A whole `<d:multistatus>` from its responses, and what follows them (a sync token). */
export function multistatusDocument(responses: readonly string[], trailer = ''): string {
  return `${MULTISTATUS_START}${responses.join('')}${trailer}${MULTISTATUS_END}`;
}

/**
 * A `<d:multistatus>` written as its parts arrive, so an answer of any size is never held whole: each part is a run of
 * responses (a page of cards), the last one may be a trailer (the sync token).
 */
export function multistatusStream(parts: AsyncIterable<string>): Readable {
  return Readable.from(
    (async function* () {
      yield MULTISTATUS_START;
      for await (const part of parts) yield part;
      yield MULTISTATUS_END;
    })(),
    { objectMode: false },
  );
}

const MULTISTATUS_START = `<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus${DECLARATIONS}>`;
const MULTISTATUS_END = '</d:multistatus>\n';
