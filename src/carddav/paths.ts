import { canonicalId } from '../domain/ids.js';

/** The fixed URLs of the address book (docs/carddav.md): the design both CardDAV helpers rely on. */
export const WELL_KNOWN_CARDDAV = '/.well-known/carddav';
export const DAV_ROOT = '/dav/';
export const CARD_EXTENSION = '.vcf';

export const principalPath = (userId: string): string => `${DAV_ROOT}principals/${userId}/`;
export const homePath = (userId: string): string => `${DAV_ROOT}addressbooks/${userId}/`;
export const bookPath = (userId: string): string => `${homePath(userId)}contacts/`;
export const cardPath = (userId: string, contactId: string): string => `${bookPath(userId)}${contactId}${CARD_EXTENSION}`;

/** What a path under the service names; `userId` and `contactId` are as stored (canonical UUIDs). */
export type DavResource =
  | { kind: 'root' }
  | { kind: 'service' }
  | { kind: 'principal'; userId: string }
  | { kind: 'home'; userId: string }
  | { kind: 'book'; userId: string }
  | { kind: 'card'; userId: string; contactId: string };

/**
 * The resource a request path names, or null for none. A trailing slash is optional (clients drop it), every segment
 * is percent-decoded, and ids must be UUIDs: anything else names nothing.
 */
export function resourceAt(path: string): DavResource | null {
  if (path === '/') return { kind: 'root' };
  const segments = decodedSegments(path);
  if (segments === null || segments[0] !== 'dav') return null;
  const [, collection, user, book, card, ...rest] = segments;
  if (collection === undefined) return { kind: 'service' };
  const userId = user === undefined ? null : canonicalId(user);
  if (userId === null || rest.length > 0) return null;
  if (collection === 'principals') return book === undefined ? { kind: 'principal', userId } : null;
  if (collection !== 'addressbooks') return null;
  if (book === undefined) return { kind: 'home', userId };
  if (book !== 'contacts') return null;
  if (card === undefined) return { kind: 'book', userId };
  const contactId = card.endsWith(CARD_EXTENSION) ? canonicalId(card.slice(0, -CARD_EXTENSION.length)) : null;
  return contactId === null ? null : { kind: 'card', userId, contactId };
}

/** The path of a resource, as every answer writes it. */
export function pathOf(resource: DavResource): string {
  switch (resource.kind) {
    case 'root':
      return '/';
    case 'service':
      return DAV_ROOT;
    case 'principal':
      return principalPath(resource.userId);
    case 'home':
      return homePath(resource.userId);
    case 'book':
      return bookPath(resource.userId);
    case 'card':
      return cardPath(resource.userId, resource.contactId);
  }
}

/** An href of a request body (a path or an absolute URL, RFC 4918 §8.3) as the resource it names, or null. */
export function resourceOfHref(href: string): DavResource | null {
  let path: string;
  try {
    path = new URL(href.trim(), 'http://href.invalid').pathname;
  } catch {
    return null;
  }
  return resourceAt(path);
}

/** The path's segments without empty ones, percent-decoded; null when one is not valid percent-encoding. */
function decodedSegments(path: string): string[] | null {
  try {
    return path
      .split('/')
      .filter((segment) => segment !== '')
      .map((segment) => decodeURIComponent(segment));
  } catch {
    return null;
  }
}
