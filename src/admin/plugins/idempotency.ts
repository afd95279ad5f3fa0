import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import fp from 'fastify-plugin';
import { canonicalId } from '../../domain/ids.js';
import { httpOutcome } from '../../web/errors.js';
import {
  fingerprintOf,
  type RequestHead,
  parseIdempotencyKey,
  runIdempotently,
  type OwnedAnswer,
  type IdempotencyOptions,
} from '../../operations/idempotency.js';
import type { Store } from '../../store/store.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from '../idempotency-headers.js';
import { targetUserOf } from './call-log.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Whether a request to this route may carry an Idempotency-Key (every POST of the admin API does). */
    idempotent?: boolean;
  }
  interface FastifyInstance {
    /**
     * What an idempotent route's handler does, for a route that reads its body itself (a streamed import) and so
     * computes its fingerprint as it reads: answers with `handle`'s answer, once per Idempotency-Key (`key`, parsed;
     * null: none).
     */
    answerIdempotently(
      request: FastifyRequest,
      reply: FastifyReply,
      idempotency: RequestIdempotency,
      handle: () => unknown,
    ): Promise<unknown>;
  }
}

/** A request's Idempotency-Key, parsed (null without one), and its fingerprint, computed only for a key. */
export interface RequestIdempotency {
  key: string | null;
  fingerprint: () => string;
  /** How long the request may run when longer than REQUEST_TIMEOUT_MS (an import): its claim is not stale before twice this. */
  runsForMs?: number;
}

export interface IdempotencyPluginOptions extends IdempotencyOptions {
  store: Pick<Store, 'idempotency' | 'oauth'>;
}

const NO_BODY = Buffer.alloc(0);

/**
 * A route with `config: { idempotent: true }` runs once per Idempotency-Key (runIdempotently: Stripe's semantics,
 * kept in the database): its handler's answer (which it returns, never sends), or the 4xx it throws, is kept and given again, with
 * `Idempotent-Replayed: true`, to the same request within 24 h. Requests without the header run as they are.
 * Registered after json-body, whose bytes make the fingerprint, and call-log, whose targets name the user an answer
 * is kept for.
 */
export default fp<IdempotencyPluginOptions>(
  async (app, options) => {
    app.decorate(
      'answerIdempotently',
      (request: FastifyRequest, reply: FastifyReply, idempotency: RequestIdempotency, handle: () => unknown) =>
        answerIdempotently(options, request, reply, idempotency, handle),
    );
    app.addHook('onRoute', (route) => {
      if (route.config?.idempotent) route.handler = idempotentHandler(route.handler, options);
    });
  },
  { name: 'idempotency', dependencies: ['json-body', 'call-log'] },
);

/** What a request's fingerprint is made of, besides its body: its path as canonicalPath makes it, with the query sent. */
export function requestHead(request: FastifyRequest): RequestHead {
  const query = request.url.indexOf('?');
  return {
    method: request.method,
    path: query === -1 ? canonicalPath(request) : canonicalPath(request) + request.url.slice(query),
    contentType: request.headers['content-type'],
  };
}

/** The operation a request names, as its Idempotency-Key's scope: its method and its canonical path, without the query. */
function requestScope(request: FastifyRequest): string {
  return `${request.method} ${canonicalPath(request)}`;
}

/**
 * The route's path with each id as stored (lower case): an id sent in upper case, or percent-encoded, names the same
 * record, so the same operation. A parameter that is not a UUID names nothing; it is kept, encoded, apart from any other.
 */
function canonicalPath(request: FastifyRequest): string {
  const params = request.params as Record<string, string>;
  return request.routeOptions.url!.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name] ?? '';
    return canonicalId(value) ?? encodeURIComponent(value);
  });
}

function idempotentHandler(handler: RouteHandlerMethod, options: IdempotencyPluginOptions): RouteHandlerMethod {
  return async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
    const idempotency = {
      key: parseIdempotencyKey(request.headers[IDEMPOTENCY_KEY_HEADER]),
      fingerprint: () => fingerprintOf(requestHead(request), request.rawBody ?? NO_BODY),
    };
    return answerIdempotently(options, request, reply, idempotency, () => handler.call(this, request, reply));
  };
}

async function answerIdempotently(
  options: IdempotencyPluginOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  { key, fingerprint, runsForMs = 0 }: RequestIdempotency,
  handle: () => unknown,
): Promise<unknown> {
  if (key === null) return handle();
  const answer = await runIdempotently(
    options.store,
    { scope: requestScope(request), key, fingerprint: fingerprint() },
    () => answerOf(handle, request, reply),
    { ...options, staleClaimMs: Math.max(options.staleClaimMs, 2 * runsForMs) },
  );
  if (answer.replayed) reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
  return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
}

/**
 * The handler's answer as it will be sent; a 4xx it throws is an answer too, a 5xx is not (the key is freed). A
 * success is the user's it acted on (which was there), so it goes with the user; a refusal made nothing of anyone's.
 */
async function answerOf(handle: () => unknown, request: FastifyRequest, reply: FastifyReply): Promise<OwnedAnswer> {
  try {
    const payload = await handle();
    if (reply.sent) throw new Error('an idempotent route’s handler sent its answer instead of returning it');
    // The routes' serializers make JSON text.
    return { status: reply.statusCode, body: reply.serialize(payload) as string, ownerId: targetUserOf(request) };
  } catch (error) {
    const outcome = httpOutcome(error);
    if (outcome.status >= 500) throw error;
    return { status: outcome.status, body: JSON.stringify({ error: outcome.message }), ownerId: null };
  }
}
