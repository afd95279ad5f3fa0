import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { canonicalId } from '../../domain/ids.js';
import { loggablePath } from '../../logger.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../idempotency-headers.js';

/** The users, keys, contacts and webhook endpoints a call acted on, by id. */
export interface AdminTargets {
  userId?: string;
  keyId?: string;
  webhookId?: string;
  /** The key a rotation made. */
  newKeyId?: string;
  /** The contact a merge kept. */
  survivorId?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** What the call acted on beyond its path's ids: the user, key or webhook endpoint it created. */
    adminTargets: AdminTargets;
  }
}

/** Notes the ids of what a call created, for its log line. */
export function noteTargets(request: FastifyRequest, targets: AdminTargets): void {
  Object.assign(request.adminTargets, targets);
}

/** The user a call acted on: the one it noted, else the one its path names (as stored); null when none. */
export function targetUserOf(request: FastifyRequest): string | null {
  return request.adminTargets.userId ?? canonicalId((request.params as { id?: string } | undefined)?.id ?? '');
}

/**
 * One `admin call` line per request, once answered: method, path, route, the ids it acted on and the status. Never a
 * header, a body or an answer (which hold the admin token and new keys): ids are logged only when they are UUIDs, and
 * the path as loggablePath makes it.
 */
export default fp(
  async (app) => {
    app.decorateRequest('adminTargets', null as unknown as AdminTargets);
    app.addHook('onRequest', async (request) => {
      request.adminTargets = {};
    });
    app.addHook('onResponse', async (request, reply) => {
      const params = (request.params ?? {}) as { id?: string; keyId?: string; contactId?: string; webhookId?: string };
      const fromPath = {
        userId: canonicalId(params.id ?? '') ?? undefined,
        keyId: canonicalId(params.keyId ?? '') ?? undefined,
        contactId: canonicalId(params.contactId ?? '') ?? undefined,
        webhookId: canonicalId(params.webhookId ?? '') ?? undefined,
      };
      request.log.info(
        {
          method: request.method,
          path: loggablePath(request.url),
          route: request.routeOptions.url,
          ...fromPath,
          ...request.adminTargets,
          status: reply.statusCode,
          ...(reply.getHeader(IDEMPOTENT_REPLAYED_HEADER) === 'true' ? { replayed: true } : {}),
        },
        'admin call',
      );
    });
  },
  { name: 'call-log' },
);
