import type { FastifyReply, FastifyRequest } from 'fastify';
import { PublicError } from '../domain/errors.js';
import { handleError } from '../web/errors.js';
import { errorDocument, XML_CONTENT_TYPE, type XmlName } from './multistatus.js';

/** A refusal with a WebDAV precondition (RFC 4918 §16): answered as `<d:error><condition/></d:error>`. */
export class DavError extends PublicError {
  override name = 'DavError';
  constructor(
    status: number,
    message: string,
    readonly condition: XmlName,
    headers: Record<string, string> = {},
  ) {
    super(status, message, { headers });
  }
}

/** The address book's error handler: a DavError as its XML body, anything else as every other route answers it. */
export function handleDavError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!(error instanceof DavError)) return handleError(error, request, reply);
  return reply.code(error.status).headers(error.headers).type(XML_CONTENT_TYPE).send(errorDocument(error.condition));
}
