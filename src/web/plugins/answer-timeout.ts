import { errorCodes } from 'fastify';
import fp from 'fastify-plugin';
import { bodyStillArriving } from '../body-read-timeout.js';

export interface AnswerTimeoutOptions {
  /** REQUEST_TIMEOUT_MS. */
  timeoutMs: number;
}

/**
 * REQUEST_TIMEOUT_MS as the server's own time: a request not answered within it gets 503 `Request timed out`, as
 * Fastify's handlerTimeout answers, but a request with a body starts the clock once the body has arrived: its arrival is the client's time
 * (BODY_READ_TIMEOUT_MS bounds it, plugins/body-read-timeout.ts). Fastify's own clock runs from the request's start,
 * so a stalled body got this 503, logged as a server error. A route with a handlerTimeout of its own (the import, which
 * reads its body as it arrives) keeps Fastify's.
 */
export default fp<AnswerTimeoutOptions>(
  async (app, { timeoutMs }) => {
    // One hook, so that a request without a body (the listing) pays for no more than Fastify's own timeout did.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.handlerTimeout) return done();
      let timer: NodeJS.Timeout | null = null;
      let over = false;
      const start = () => {
        if (over) return;
        timer = setTimeout(() => {
          if (reply.sent) return;
          const error = new errorCodes.FST_ERR_HANDLER_TIMEOUT(timeoutMs, request.routeOptions.url);
          // An answer already under way cannot become another: it is cut off, as Fastify's own timeout does.
          if (reply.raw.headersSent) return void reply.raw.destroy(error);
          void reply.send(error);
        }, timeoutMs);
      };
      reply.raw.once('close', () => {
        over = true;
        if (timer !== null) clearTimeout(timer);
      });
      if (bodyStillArriving(request.raw)) request.raw.once('end', start);
      else start();
      done();
    });
  },
  { name: 'answer-timeout' },
);
