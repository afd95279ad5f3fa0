import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { bodyStillArriving } from '../body-read-timeout.js';

export interface AnswerTimeoutOptions {
  /** REQUEST_TIMEOUT_MS. */
  timeoutMs: number;
}

interface Clock {
  timer: NodeJS.Timeout | null;
  /** The answer is out, or the client gone. */
  over: boolean;
  /** The time left when the clock was stopped. */
  leftMs: number;
  startedAt: number;
}

/**
 * REQUEST_TIMEOUT_MS as the server's own time: a request not answered within it gets 503 `Request timed out`, as
 * Fastify's handlerTimeout answers, but the clock stops while Fastify reads the body, which is the client's time
 * (BODY_READ_TIMEOUT_MS bounds it, plugins/body-read-timeout.ts). Fastify's own clock runs from the request's start,
 * so a stalled body got this 503, logged as a server error. A route with a handlerTimeout of its own (the import, which
 * reads its body as it arrives) keeps Fastify's.
 */
export default fp<AnswerTimeoutOptions>(
  async (app, { timeoutMs }) => {
    const clocks = new WeakMap<FastifyRequest, Clock>();

    const run = (request: FastifyRequest, reply: FastifyReply, clock: Clock) => {
      if (clock.over) return;
      clock.startedAt = Date.now();
      clock.timer = setTimeout(() => {
        if (reply.sent) return;
        const error = new errorCodes.FST_ERR_HANDLER_TIMEOUT(timeoutMs, request.routeOptions.url);
        // An answer already under way cannot become another: it is cut off, as Fastify's own timeout does.
        if (reply.raw.headersSent) return void reply.raw.destroy(error);
        void reply.send(error);
      }, clock.leftMs);
    };

    app.addHook('onRequest', async (request, reply) => {
      if (request.routeOptions.handlerTimeout) return;
      const clock: Clock = { timer: null, over: false, leftMs: timeoutMs, startedAt: 0 };
      clocks.set(request, clock);
      run(request, reply, clock);
      reply.raw.once('close', () => {
        clock.over = true;
        clearTimeout(clock.timer ?? undefined);
      });
    });
    app.addHook('preParsing', async (request) => {
      const clock = clocks.get(request);
      if (clock?.timer == null || !bodyStillArriving(request.raw)) return;
      clearTimeout(clock.timer);
      clock.timer = null;
      clock.leftMs -= Date.now() - clock.startedAt;
    });
    app.addHook('preValidation', async (request, reply) => {
      const clock = clocks.get(request);
      if (clock !== undefined && clock.timer === null) run(request, reply, clock);
    });
  },
  { name: 'answer-timeout' },
);
