import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import type { Store } from '../../store/store.js';
import { PublicError } from '../../domain/errors.js';
import { errorResponse, NO_STORE_HEADER } from '../../web/schemas/common.js';
import { EVERY_OPERATION_RESPONSES } from '../../web/schemas/every-operation-responses.js';
import { HEALTH_PATH, READINESS_PATH } from '../../web/probe-paths.js';

/** Readiness answers within this bound even when the database hangs, so a probe never times out first. */
export const READINESS_TIMEOUT_MS = 2_000;
export const DATABASE_UNAVAILABLE_MESSAGE = 'Database unavailable';

const StatusSchema = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false });

/**
 * Probes for orchestrators and load balancers: unauthenticated, never rate-limited, never cached.
 * `/healthz` says the process answers; `/readyz` also that the database does.
 */
export function registerHealthRoutes(app: FastifyInstance, deps: { store: Pick<Store, 'ping'> }): void {
  app.get(
    HEALTH_PATH,
    {
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness: the process is up',
        description: 'Answers without touching the database, for an orchestrator’s liveness probe. No key, no rate limit.',
        tags: ['meta'],
        response: {
          ...EVERY_OPERATION_RESPONSES,
          200: { ...StatusSchema, description: 'The process answers.', headers: { 'Cache-Control': NO_STORE_HEADER } },
        },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    READINESS_PATH,
    {
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: the process and its database are up',
        description: `Asks the database, for a load balancer’s readiness probe; answers within ${READINESS_TIMEOUT_MS} ms even when the database hangs. No key, no rate limit.`,
        tags: ['meta'],
        response: {
          ...EVERY_OPERATION_RESPONSES,
          200: { ...StatusSchema, description: 'The database answers.', headers: { 'Cache-Control': NO_STORE_HEADER } },
          503: errorResponse(`The database did not answer within ${READINESS_TIMEOUT_MS} ms: \`${DATABASE_UNAVAILABLE_MESSAGE}\`.`),
        },
      },
    },
    async () => {
      try {
        await withTimeout(deps.store.ping(), READINESS_TIMEOUT_MS);
      } catch (error) {
        throw new PublicError(503, DATABASE_UNAVAILABLE_MESSAGE, { internal: 'readiness check: database unavailable', cause: error });
      }
      return { status: 'ok' as const };
    },
  );
}

async function withTimeout(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
