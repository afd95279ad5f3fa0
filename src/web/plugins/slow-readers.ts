import fp from 'fastify-plugin';
import { ThrottledWarning } from '../../throttled-warning.js';
import { closeSlowReaders, type SlowReaderClosure, type SlowReaderLimits } from '../slow-readers.js';

/** A flood of clients that stop reading closes thousands of connections a second: logging each would add to it. */
const SLOW_READER_WARNING_INTERVAL_MS = 10_000;

/** Closes the connections whose clients stop reading their answers (src/web/slow-readers.ts), with a throttled warning. */
export default fp<SlowReaderLimits>(
  async (app, limits) => {
    const warnings = new Map<SlowReaderClosure, ThrottledWarning>();
    const stop = closeSlowReaders(app.server, limits, (reason) => {
      if (!warnings.has(reason)) warnings.set(reason, new ThrottledWarning(SLOW_READER_WARNING_INTERVAL_MS));
      const closuresNotLogged = warnings.get(reason)!.occurred();
      if (closuresNotLogged !== null)
        app.log.warn({ reason, closuresNotLogged }, 'closed a connection whose client does not read its answers');
    });
    app.addHook('onClose', async () => stop());
  },
  { name: 'slow-readers' },
);
