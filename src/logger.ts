import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { stdoutDestination, type LogDestination } from './log-destination.js';

/** Anything shaped like an API key of any deployment's prefix: `<prefix>_live_<secret>` or `_test_`. */
const KEY_SHAPED = /[a-z][a-z0-9]{1,15}_(?:live|test)_[A-Za-z0-9]+/g;
/** The same pattern without the global flag, whose `test` keeps no state between calls. */
const HOLDS_KEY_SHAPED = new RegExp(KEY_SHAPED.source);
const ERROR_CODE = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_LOGGED_PATH = 200;
/** The message of a log call that carries only an error; pino would otherwise use the error's message. */
const ERROR_MESSAGE = 'error';

/**
 * An error as it may be logged: its class, its code (an errno or SQLSTATE such as `57014`) and its stack
 * frames, never its message or properties. Messages and driver fields (`detail`, `where`, a client
 * error's raw request bytes) can quote keys, SQL parameters or contact data.
 */
export function loggableError(error: unknown): { type: string; code?: string; stack?: string } {
  if (!(error instanceof Error)) return { type: typeof error };
  const code = (error as { code?: unknown }).code;
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => line.trimStart().startsWith('at '))
    .join('\n');
  return {
    type: error.name,
    ...(typeof code === 'string' && ERROR_CODE.test(code) ? { code } : {}),
    ...(frames ? { stack: frames } : {}),
  };
}

/** True when `text` holds anything shaped like an API key. */
export function containsKeyShapedText(text: string): boolean {
  return HOLDS_KEY_SHAPED.test(text);
}

const PERCENT_ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;
/** Percent-escapes decoded up to this many times over: enough for a key encoded twice or thrice on its way. */
const MAX_DECODING_ROUNDS = 4;

/** `text` percent-decoded until nothing changes (at most MAX_DECODING_ROUNDS), leaving malformed escapes as they are. */
function percentDecoded(text: string): string {
  if (!text.includes('%')) return text;
  let decoded = text;
  for (let round = 0; round < MAX_DECODING_ROUNDS; round += 1) {
    const next = decoded.replace(PERCENT_ESCAPES, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
    if (next === decoded) break;
    decoded = next;
  }
  return decoded;
}

/**
 * A request's path for the log: no query string, percent-decoded (so `cnt%5Flive%5F…` or a key with one escaped
 * character is seen whole), anything key-shaped replaced, and bounded.
 */
export function loggablePath(url: string): string {
  const path = percentDecoded(url.split('?', 1)[0]!).replace(KEY_SHAPED, '[redacted]');
  return path.length > MAX_LOGGED_PATH ? `${path.slice(0, MAX_LOGGED_PATH)}…` : path;
}

interface LoggedRequest {
  method: string;
  url: string;
  ip?: string;
  routeOptions?: { url?: string };
}

const serializers = {
  err: loggableError,
  req: (request: LoggedRequest) => ({
    method: request.method,
    path: loggablePath(request.url),
    route: request.routeOptions?.url,
    remoteAddress: request.ip,
  }),
  res: (reply: { statusCode: number }) => ({ statusCode: reply.statusCode }),
};

const options = (level: string): LoggerOptions => ({
  level,
  serializers,
  // Headers are never logged by the serializers above; these paths catch a header object logged by hand.
  redact: {
    paths: ['authorization', 'headers.authorization', '*.headers.authorization', 'req.headers', 'request.headers'],
    censor: '[redacted]',
  },
  hooks: {
    // pino makes an error's message the line's message when no other is given; give one instead.
    logMethod(args, method) {
      const [first, second] = args as unknown[];
      if (first instanceof Error) return method.apply(this, [{ err: first }, typeof second === 'string' ? second : ERROR_MESSAGE]);
      if (typeof first === 'object' && first !== null && 'err' in first && typeof second !== 'string') {
        return method.apply(this, [first, ERROR_MESSAGE]);
      }
      return method.apply(this, args);
    },
  },
});

/** Destinations whose drops a logger already reports: one warning per catch-up, whatever the number of loggers. */
const reportingDrops = new WeakSet<LogDestination>();

/**
 * The service's JSON logger (pino). Keys, the Authorization header and contact data stay out of every
 * line: requests are logged by method, path and route only, and errors by class, code and stack frames.
 * By default it writes to stdout without ever blocking (see stdoutDestination), and says how many lines it
 * dropped once a stalled reader catches up.
 */
export function createLogger(level: string, destination: DestinationStream | LogDestination = stdoutDestination()): Logger {
  const logger = pino(options(level), destination);
  if ('onCaughtUp' in destination && !reportingDrops.has(destination)) {
    reportingDrops.add(destination);
    destination.onCaughtUp((dropped) => logger.warn({ dropped }, 'log lines dropped while stdout was not read'));
  }
  return logger;
}
