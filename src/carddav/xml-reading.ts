import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { InputError } from '../domain/errors.js';
import { assertNestingWithinLimits } from './xml-nesting.js';

/** An element of a request body with its name resolved to its namespace URI (clients use any prefix they like). */
export interface XmlElement {
  namespace: string;
  name: string;
  attributes: Readonly<Record<string, string>>;
  children: XmlElement[];
  /** The element's own text, its children's left out. */
  text: string;
}

const XML_NS = 'http://www.w3.org/XML/1998/namespace';

const ATTRIBUTES = ':@';
const TEXT = '#text';

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  processEntities: true,
  htmlEntities: false,
});

/** fast-xml-parser's ordered form: each node is `{ tag: children, ':@': attributes }` or `{ '#text': text }`. */
type OrderedNode = Record<string, unknown>;

/**
 * Reads a request body into namespace-resolved elements (fast-xml-parser does the parsing; this resolves each
 * element's prefix with the xmlns declarations in scope). Refuses what is not well-formed, elements nested too deep
 * (xml-nesting.ts), and any DTD: DAV bodies never carry one, and its entities are only a way to make a small body expand.
 */
export function readXml(body: string): XmlElement {
  if (/<!DOCTYPE/i.test(body)) throw new InputError('Request body must not carry a DTD');
  assertNestingWithinLimits(body);
  const valid = XMLValidator.validate(body);
  if (valid !== true) throw new InputError(`Request body is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  const roots = elementsOf(parser.parse(body) as OrderedNode[], new Map([['xml', XML_NS]]));
  if (roots.length !== 1) throw new InputError('Request body must hold one XML document element');
  return roots[0]!;
}

/**
 * The elements among `nodes`. `scope` is the namespace each prefix is bound to where they stand; an element's
 * declarations change it while its children are read and are undone after, so a body with thousands of declarations
 * costs their number, not their number times its elements'.
 */
function elementsOf(nodes: readonly OrderedNode[], scope: Map<string, string>): XmlElement[] {
  const elements: XmlElement[] = [];
  for (const node of nodes) {
    const tag = Object.keys(node).find((key) => key !== ATTRIBUTES && key !== TEXT);
    if (tag === undefined) continue;
    elements.push(elementOf(tag, node[tag] as OrderedNode[], (node[ATTRIBUTES] ?? {}) as Record<string, string>, scope));
  }
  return elements;
}

function elementOf(tag: string, content: readonly OrderedNode[], attributes: Record<string, string>, scope: Map<string, string>) {
  const hidden = new Map<string, string | undefined>();
  const plain: Record<string, string> = {};
  for (const [name, value] of Object.entries(attributes)) {
    const declared = name === 'xmlns' ? '' : name.startsWith('xmlns:') ? name.slice('xmlns:'.length) : null;
    if (declared === null) {
      plain[name.includes(':') ? name.slice(name.indexOf(':') + 1) : name] = value;
      continue;
    }
    if (!hidden.has(declared)) hidden.set(declared, scope.get(declared));
    scope.set(declared, value);
  }
  const colon = tag.indexOf(':');
  const prefix = colon < 0 ? '' : tag.slice(0, colon);
  const namespace = scope.get(prefix);
  if (namespace === undefined && prefix !== '') throw new InputError(`Request body uses the undeclared namespace prefix "${prefix}"`);
  const text = content
    .filter((node) => TEXT in node)
    .map((node) => String(node[TEXT]))
    .join('');
  const children = elementsOf(content, scope);
  for (const [declared, outer] of hidden) {
    if (outer === undefined) scope.delete(declared);
    else scope.set(declared, outer);
  }
  return { namespace: namespace ?? '', name: tag.slice(colon + 1), attributes: plain, children, text };
}

/** The first child with this namespace and name, or undefined. */
export function childOf(element: XmlElement, namespace: string, name: string): XmlElement | undefined {
  return element.children.find((child) => child.namespace === namespace && child.name === name);
}

/** Whether the element is the one with this namespace and name. */
export function isElement(element: XmlElement, namespace: string, name: string): boolean {
  return element.namespace === namespace && element.name === name;
}
