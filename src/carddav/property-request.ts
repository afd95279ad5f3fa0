import { InputError } from '../domain/errors.js';
import type { XmlName } from './multistatus.js';
import type { PropertyRequest } from './properties.js';
import { DAV_NS } from './namespaces.js';
import { childOf, isElement, readXml, type XmlElement } from './xml-reading.js';

/** A request body as text: Fastify hands the address book's routes their bodies as strings (or nothing). */
export function bodyText(body: unknown): string {
  return typeof body === 'string' ? body : '';
}

/** The root element of a body that must be there. */
export function requiredXml(body: unknown, what: string): XmlElement {
  const text = bodyText(body);
  if (text.trim() === '') throw new InputError(`${what} needs an XML request body`);
  return readXml(text);
}

/** A PROPFIND body (RFC 4918 §9.1): none is allprop. */
export function readPropfind(body: unknown): PropertyRequest {
  const text = bodyText(body);
  if (text.trim() === '') return { kind: 'allprop' };
  const root = readXml(text);
  if (!isElement(root, DAV_NS, 'propfind')) throw new InputError('PROPFIND body must be a DAV:propfind element');
  return propertyRequestIn(root) ?? failure('DAV:propfind must hold DAV:prop, DAV:allprop or DAV:propname');
}

/**
 * The most properties a DAV:prop may name. Clients ask for under 50; each is answered for every card, and a 4 MB list
 * of 650,000 was 0.3 s of CPU and 3.9 MB of answer a card.
 */
export const MAX_PROPERTIES = 256;

/** What a propfind or a REPORT asks of each resource: its DAV:prop, allprop or propname; null when it says none. */
export function propertyRequestIn(parent: XmlElement): PropertyRequest | null {
  if (childOf(parent, DAV_NS, 'allprop')) return { kind: 'allprop' };
  if (childOf(parent, DAV_NS, 'propname')) return { kind: 'propname' };
  const prop = childOf(parent, DAV_NS, 'prop');
  if (prop === undefined) return null;
  if (prop.children.length > MAX_PROPERTIES) throw new InputError(`DAV:prop may name at most ${MAX_PROPERTIES} properties`);
  const names: XmlName[] = prop.children.map(({ namespace, name }) => ({ namespace, name }));
  return { kind: 'prop', names };
}

function failure(message: string): never {
  throw new InputError(message);
}
