import type { Server } from 'node:http';
import { LogController, type FastifyBaseLogger, type FastifyHttpOptions } from 'fastify';
import { DEFAULT_BODY_LIMIT_BYTES } from './body-size.js';
import { handleClientError } from './client-error.js';
import { handleError } from './errors.js';
import { requestIdOf } from './plugins/request-id.js';
import { lazyRequestLogger, OneLineRequestLog } from './request-log.js';

/**
 * The Fastify options of every HTTP app of the service (the public API and the admin API): its logger, request ids,
 * time limits, and every refusal answered as `{ error }` JSON.
 */
export function jsonServerOptions(options: {
  logger: FastifyBaseLogger | false;
  requestTimeoutMs: number;
  /** Whether each request writes its one `request completed` line (request-log.ts); an app that logs its own says no. */
  requestLines?: boolean;
}) {
  const { logger, requestTimeoutMs, requestLines = true } = options;
  const requestLog = logger && requestLines ? new OneLineRequestLog(logger) : null;
  return {
    loggerInstance: logger || undefined,
    logger: logger === false ? false : undefined,
    requestIdHeader: false,
    genReqId: requestIdOf,
    // One line per request (request-log.ts), or none, and no logger made for a request that logs nothing else.
    logController: requestLog ?? new LogController({ disableRequestLogging: true }),
    ...(logger ? { childLoggerFactory: lazyRequestLogger } : {}),
    bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
    // Node bounds the headers alone (408 by handleClientError). A slow answer gets 503 (plugins/answer-timeout.ts) and
    // a body that stalls or trickles 408 (plugins/body-read-timeout.ts): Node's requestTimeout bounds a whole request,
    // which would cut off a large import arriving at a healthy pace. Node checks for requests past their timeout every
    // 30 s by default, which would let a slow client (slowloris) hold a connection up to 30 s longer than headersTimeout.
    // requireHostHeader off: Node would answer a request without Host with a bare 400; hostRefusal answers it in JSON.
    http: {
      headersTimeout: requestTimeoutMs,
      requestTimeout: 0,
      connectionsCheckingInterval: Math.min(1_000, requestTimeoutMs),
      requireHostHeader: false,
    },
    // Oversized headers (431), slow clients (408) and unparseable requests (400) answer `{ error }` JSON too.
    clientErrorHandler: handleClientError,
    // Requests that arrive on a kept-alive connection during shutdown are served, with Connection: close.
    return503OnClosing: false,
    // A path that is not valid percent-encoding (`/%`) fails in the router, before any hook: answered as `{ error }` too.
    // Fastify logs no completion of these (they skip the route's lifecycle): their one line is written here.
    frameworkErrors: (error, request, reply) => {
      if (requestLog !== null) reply.raw.once('finish', () => requestLog.requestCompleted(null, request, reply));
      void handleError(error, request, reply);
    },
  } satisfies FastifyHttpOptions<Server>;
}
