import type { Card } from './cards.js';
import { CARD_CONTENT_TYPE } from './cards.js';
import {
  calendarServer,
  carddav,
  dav,
  element,
  escapeXml,
  hrefElement,
  propertiesResponse,
  type FoundProperty,
  type XmlName,
} from './multistatus.js';
import { pathOf, principalPath, homePath, type DavResource } from './paths.js';

/** What an answer describes: a collection (or the root), or a card with its bytes. */
export type Target =
  { resource: Exclude<DavResource, { kind: 'card' }> } | { resource: Extract<DavResource, { kind: 'card' }>; card: Card };

/** What a PROPFIND or REPORT asks for: every property (allprop), their names (propname), or the ones named. */
export type PropertyRequest = { kind: 'allprop' } | { kind: 'propname' } | { kind: 'prop'; names: XmlName[] };

export interface PropertyContext {
  /** The user the key belongs to: every path here is theirs. */
  ownerId: string;
  /** The address book's sync token (a URI) when the answer describes the book, else null. */
  syncToken: string | null;
}

type Kind = DavResource['kind'];
type Value = (target: Target, context: PropertyContext) => string;

interface Property {
  name: XmlName;
  on: readonly Kind[];
  value: Value;
  /** Sent for allprop; address-data is not (RFC 6352 §10.4 asks for it by name). */
  allprop: boolean;
}

const COLLECTIONS: readonly Kind[] = ['root', 'service', 'principal', 'home', 'book'];
const EVERYWHERE: readonly Kind[] = [...COLLECTIONS, 'card'];
const REPORTS = ['addressbook-multiget', 'addressbook-query'].map(carddav).concat(dav('sync-collection'));
/** Read only: the one privilege of every resource here (RFC 3744 §5.4). */
const READ_ONLY_PRIVILEGES = [dav('read'), dav('read-current-user-privilege-set')]
  .map((privilege) => element(dav('privilege'), element(privilege)))
  .join('');

const cardOfTarget = (target: Target): Card => ('card' in target ? target.card : missingCard());
const missingCard = (): never => {
  throw new Error('a card property was asked of a collection');
};
const principal = (context: PropertyContext) => hrefElement(principalPath(context.ownerId));
const DISPLAY_NAMES: Record<Kind, string> = {
  root: 'Contacts',
  service: 'Contacts',
  principal: 'Contacts',
  home: 'Address books',
  book: 'Contacts',
  card: '',
};

const PROPERTIES: readonly Property[] = [
  {
    name: dav('resourcetype'),
    on: EVERYWHERE,
    allprop: true,
    value: ({ resource }) =>
      resource.kind === 'card'
        ? ''
        : element(dav('collection')) +
          (resource.kind === 'principal' ? element(dav('principal')) : resource.kind === 'book' ? element(carddav('addressbook')) : ''),
  },
  { name: dav('displayname'), on: COLLECTIONS, allprop: true, value: ({ resource }) => escapeXml(DISPLAY_NAMES[resource.kind]) },
  { name: dav('current-user-principal'), on: EVERYWHERE, allprop: true, value: (_target, context) => principal(context) },
  { name: dav('principal-URL'), on: ['root', 'service', 'principal'], allprop: true, value: (_target, context) => principal(context) },
  {
    name: carddav('addressbook-home-set'),
    on: ['principal'],
    allprop: true,
    value: (_target, context) => hrefElement(homePath(context.ownerId)),
  },
  { name: dav('owner'), on: ['home', 'book'], allprop: true, value: (_target, context) => principal(context) },
  { name: dav('current-user-privilege-set'), on: EVERYWHERE, allprop: true, value: () => READ_ONLY_PRIVILEGES },
  {
    name: dav('supported-report-set'),
    on: ['book'],
    allprop: true,
    value: () => REPORTS.map((report) => element(dav('supported-report'), element(dav('report'), element(report)))).join(''),
  },
  {
    name: carddav('supported-address-data'),
    on: ['book'],
    allprop: true,
    value: () => '<card:address-data-type content-type="text/vcard" version="3.0"/>',
  },
  {
    name: carddav('addressbook-description'),
    on: ['book'],
    allprop: true,
    value: () => escapeXml('Your network, read-only'),
  },
  { name: dav('sync-token'), on: ['book'], allprop: true, value: (_target, context) => escapeXml(syncTokenOf(context)) },
  { name: calendarServer('getctag'), on: ['book'], allprop: true, value: (_target, context) => escapeXml(syncTokenOf(context)) },
  { name: dav('getetag'), on: ['card'], allprop: true, value: (target) => escapeXml(cardOfTarget(target).etag) },
  { name: dav('getcontenttype'), on: ['card'], allprop: true, value: () => escapeXml(CARD_CONTENT_TYPE) },
  { name: dav('getcontentlength'), on: ['card'], allprop: true, value: (target) => String(Buffer.byteLength(cardOfTarget(target).body)) },
  {
    name: dav('getlastmodified'),
    on: ['card'],
    allprop: true,
    value: (target) => new Date(cardOfTarget(target).updatedAt).toUTCString(),
  },
  { name: carddav('address-data'), on: ['card'], allprop: false, value: (target) => escapeXml(cardOfTarget(target).body) },
];

function syncTokenOf(context: PropertyContext): string {
  if (context.syncToken === null) throw new Error('the book was described without its sync token');
  return context.syncToken;
}

const keyOf = ({ namespace, name }: XmlName) => `${namespace} ${name}`;
const BY_NAME = new Map(PROPERTIES.map((property) => [keyOf(property.name), property]));

/** Whether answering this request about the book needs its sync token (a read of the change log). */
export function needsSyncToken(request: PropertyRequest): boolean {
  if (request.kind !== 'prop') return request.kind === 'allprop';
  return request.names.some((name) => ['sync-token', 'getctag'].includes(name.name) && BY_NAME.has(keyOf(name)));
}

/** The `<d:response>` describing a target: the properties asked for that it has, and those it lacks as 404. */
export function describe(target: Target, request: PropertyRequest, context: PropertyContext): string {
  const kind = target.resource.kind;
  const path = pathOf(target.resource);
  if (request.kind !== 'prop') {
    const own = PROPERTIES.filter((property) => property.on.includes(kind) && (request.kind === 'propname' || property.allprop));
    const found = own.map((property): FoundProperty => [property.name, request.kind === 'propname' ? '' : property.value(target, context)]);
    return propertiesResponse(path, found, []);
  }
  const found: FoundProperty[] = [];
  const missing: XmlName[] = [];
  for (const name of request.names) {
    const property = BY_NAME.get(keyOf(name));
    if (property?.on.includes(kind)) found.push([name, property.value(target, context)]);
    else missing.push(name);
  }
  return propertiesResponse(path, found, missing);
}
