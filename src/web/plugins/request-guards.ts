import fp from 'fastify-plugin';
import { InputError } from '../../domain/errors.js';
import { bodySizeRefusal } from '../body-size.js';
import { hostRefusal } from '../host-header.js';
import { refuseBeyondInflightBound } from '../inflight-requests.js';

export interface RequestGuardOptions {
  /** MAX_INFLIGHT_REQUESTS: past this many requests begun and not finished in the process, 503. */
  maxInflightRequests: number;
}

/**
 * What is refused from a request's head alone, before any body is read: a bad Host, a declared body over its route's
 * limit, an unknown path or method (so a bad body can't turn a 405 into a 400), and a request beyond the process's
 * in-flight bound. Every answer is `no-store` unless its route says otherwise. Registered after the plugins whose
 * headers every answer carries, refusals included.
 */
export default fp<RequestGuardOptions>(
  async (app, options) => {
    const { refuseUnrouted } = app;
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('cache-control', 'no-store');
      try {
        const refusal = hostRefusal(request.raw);
        if (refusal !== null) throw new InputError(refusal);
        const tooLarge = bodySizeRefusal(request);
        if (tooLarge !== null) throw tooLarge;
        if (request.is404) refuseUnrouted(request);
      } catch (error) {
        return done(error as Error);
      }
      done();
    });
    refuseBeyondInflightBound(app, options.maxInflightRequests);
  },
  { name: 'request-guards', dependencies: ['errors'], decorators: { fastify: ['refuseUnrouted'] } },
);
