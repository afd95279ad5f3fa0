import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { XML_CONTENT_TYPE } from './multistatus.js';

/** 207 Multi-Status with its document, whole or streamed. */
export function sendMultistatus(reply: FastifyReply, document: string | Readable): FastifyReply {
  return reply.code(207).type(XML_CONTENT_TYPE).send(document);
}
