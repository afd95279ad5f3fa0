import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Whether `If-None-Match` names the current representation (RFC 9110 §13.1.2): `*` matches any representation that
 * exists, and entity tags compare weakly (a `W/` prefix is ignored), as that header asks.
 */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

/** The request's If-None-Match, or undefined (repeated headers are joined, as lists). */
export function ifNoneMatchOf(request: FastifyRequest): string | undefined {
  const value = request.headers['if-none-match'];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Answers 304 Not Modified with the entity tag and no body when `If-None-Match` names it; returns whether it did. */
export function notModified(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  if (!ifNoneMatchMatches(ifNoneMatchOf(request), etag)) return false;
  void reply.code(304).header('etag', etag).send();
  return true;
}

/** The tag of a representation sent in a content coding: the plain tag with the coding appended inside its quotes. */
export function codedEtag(etag: string, coding: 'br' | 'gzip' | null): string {
  return coding === null ? etag : `${etag.slice(0, -1)}-${coding}"`;
}

/**
 * Answers 304 when `If-None-Match` names the resource's tag in any form it may have been sent in (as it is, Brotli,
 * gzip): a client keeps the tag of the bytes it got. Returns whether it did.
 */
export function notModifiedInAnyCoding(request: FastifyRequest, reply: FastifyReply, etag: string): boolean {
  if (ifNoneMatchOf(request) === undefined) return false;
  return ([null, 'br', 'gzip'] as const).some((coding) => notModified(request, reply, codedEtag(etag, coding)));
}

/** A strong entity tag for fixed content: its SHA-256, shortened. */
export function contentEtag(content: string | Buffer): string {
  return `"${createHash('sha256').update(content).digest('base64url').slice(0, 32)}"`;
}
