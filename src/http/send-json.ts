import type { FastifyReply } from 'fastify';

/**
 * Sends JSON that is already serialized (contacts' JSON is built and stored by the database); the typed reply only
 * knows the schema's object form. The conformance suite and the OpenAPI validation tests hold the bytes to the schema.
 */
export function sendJson(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
