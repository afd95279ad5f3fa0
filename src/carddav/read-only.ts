import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../web/authorize.js';
import { DavError } from './dav-error.js';
import { dav } from './multistatus.js';
import { bookPath, resourceAt } from './paths.js';
import { ownedResource } from './resources.js';

/** What the address book answers; a write method is refused (the book mirrors the network, which changes elsewhere). */
export const READ_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PROPFIND', 'REPORT'] as const;
export const WRITE_METHODS = ['PUT', 'DELETE', 'MKCOL', 'PROPPATCH', 'MOVE', 'COPY'] as const;

export const READ_ONLY_MESSAGE = 'The address book is read-only: change contacts where your network is kept';

/**
 * A write: 404 for a path that is not the owner's (as for any method), 405 for MKCOL on a resource that exists (RFC 4918
 * §9.3.1), else 403 need-privileges (RFC 3744 §7.1.1): current-user-privilege-set shows read only.
 */
export async function refuseWrite(request: FastifyRequest, _reply: FastifyReply): Promise<never> {
  const { ownerId } = principalOf(request);
  // A new card may have any name (not only <uuid>.vcf): inside the owner's book, it is refused, not unknown.
  if (request.url.startsWith(bookPath(ownerId)) && resourceAt(request.url.split('?', 1)[0]!) === null) throw readOnly();
  const resource = ownedResource(request, ownerId);
  if (request.method === 'MKCOL' && resource.kind !== 'card') {
    throw new DavError(405, 'MKCOL: the collection exists already', dav('resource-must-be-null'), { allow: READ_METHODS.join(', ') });
  }
  throw readOnly();
}

const readOnly = () => new DavError(403, READ_ONLY_MESSAGE, dav('need-privileges'));
