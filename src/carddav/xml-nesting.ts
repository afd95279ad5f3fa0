import { DavError } from './dav-error.js';
import { SERVICE_NS } from './namespaces.js';

/**
 * How deep a request body's elements may nest. Clients send four to six levels (an addressbook-query's text-match is
 * the fourth); reading 2,000 was a RangeError.
 */
export const MAX_XML_DEPTH = 256;
/**
 * How long an element's qualified name and its ancestors' may be together, counted as fast-xml-parser keeps them (one
 * string, a dot after each name), because it copies that string at every element it reads: a 480 kB body of one
 * 200,000-character name holding 20,000 empty elements took 15 s of CPU to parse. Up to 4,096 characters, a 4 MiB body
 * of empty elements at the end of the longest path parses in about the time it takes at the top; at 8,192, three times
 * it. Clients' paths are under 100 characters.
 */
export const MAX_XML_PATH = 4096;

/**
 * Refuses a body whose elements nest deeper than MAX_XML_DEPTH or run longer than MAX_XML_PATH, before anything parses
 * it: one pass over its markup, without recursion, that stops at the first element too deep. Comments, CDATA sections
 * and processing instructions are stepped over; what is not well-formed is left to the validator.
 */
export function assertNestingWithinLimits(body: string): void {
  const open: number[] = [];
  let path = 0;
  let at = body.indexOf('<');
  while (at >= 0) {
    if (body.startsWith('<!--', at)) at = body.indexOf('-->', at + 4);
    else if (body.startsWith('<![CDATA[', at)) at = body.indexOf(']]>', at + 9);
    else if (body.startsWith('<?', at)) at = body.indexOf('?>', at + 2);
    else if (body.startsWith('</', at)) {
      path -= open.pop() ?? 0;
      at = body.indexOf('>', at);
    } else {
      const tag = startTag(body, at);
      if (tag === null) return;
      const length = tag.name + 1;
      if (open.length + 1 > MAX_XML_DEPTH || path + length > MAX_XML_PATH) throw tooDeep();
      if (!tag.empty) {
        open.push(length);
        path += length;
      }
      at = tag.end;
    }
    if (at < 0) return;
    at = body.indexOf('<', at + 1);
  }
}

const TAG_NAME = /[^\s/>]*/y;
const TAG_END_OR_QUOTE = /[>"']/g;

/** The start tag at `from`: its name's length, whether it is an empty-element tag, and where its `>` is; null if none. */
function startTag(body: string, from: number): { name: number; empty: boolean; end: number } | null {
  TAG_NAME.lastIndex = from + 1;
  TAG_NAME.test(body);
  const name = TAG_NAME.lastIndex - from - 1;
  TAG_END_OR_QUOTE.lastIndex = TAG_NAME.lastIndex;
  for (let mark = TAG_END_OR_QUOTE.exec(body); mark !== null; mark = TAG_END_OR_QUOTE.exec(body)) {
    if (mark[0] === '>') return { name, empty: body[mark.index - 1] === '/', end: mark.index };
    const closingQuote = body.indexOf(mark[0], mark.index + 1);
    if (closingQuote < 0) return null;
    TAG_END_OR_QUOTE.lastIndex = closingQuote + 1;
  }
  return null;
}

const tooDeep = () =>
  new DavError(
    400,
    `Request body nests elements more than ${MAX_XML_DEPTH} deep, or their names run past ${MAX_XML_PATH} characters along one branch`,
    { namespace: SERVICE_NS, name: 'xml-nesting-within-limits' },
  );
