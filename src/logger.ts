import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { stdoutDestination, type LogDestination } from './log-destination.js';

/** Anything shaped like an API key of any deployment's prefix: `<prefix>_live_<secret>` or `_test_`. */
const KEY_SHAPED = /[a-z][a-z0-9]{1,15}_(?:live|test)_[A-Za-z0-9]+/g;
/**
 * A run of token characters long enough to be a secret: a key's secret without its prefix (36 base62 characters),
 * an OAuth code or token (oidc-provider's are 43 of base64url), any random token. The replacement character counts
 * as one of them, so an invalid escape in the middle does not cut a token into two short runs.
 */
const TOKEN_RUN = /[A-Za-z0-9_\-\uFFFD]{20,}/g;
/**
 * A random token of 20 characters or more holds both cases (all but one in 10^8 of ours). UUIDs and hex trace ids
 * have one case: they stay readable in the log.
 */
const isSecretShaped = (run: string) => /[a-z]/.test(run) && /[A-Z]/.test(run);
const REDACTED = '[redacted]';
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

/** `text` with anything shaped like an API key or a secret token replaced. */
function redactSecrets(text: string): string {
  return text.replace(KEY_SHAPED, REDACTED).replace(TOKEN_RUN, (run) => (isSecretShaped(run) ? REDACTED : run));
}

/** True when `text` holds anything shaped like an API key or a secret token. */
export function containsSecretShapedText(text: string): boolean {
  return redactSecrets(text) !== text;
}

const PERCENT_ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;
/**
 * Rounds of percent-decoding before giving up: each round takes off one level of encoding, and a request line
 * (16 KB at most in Node) holds at most 9 levels of `%25`.
 */
const MAX_DECODING_ROUNDS = 12;
const UTF8 = new TextDecoder('utf-8', { fatal: false });

/** One level of percent-decoding, as bytes: an escape that is not valid UTF-8 (%FF) becomes U+FFFD, and only it. */
function percentDecodedOnce(text: string): string {
  return text.replace(PERCENT_ESCAPES, (run) => UTF8.decode(Buffer.from(run.replaceAll('%', ''), 'hex')));
}

/** `text` percent-decoded until nothing changes, or null when it still changes after MAX_DECODING_ROUNDS. */
function percentDecoded(text: string): string | null {
  if (!text.includes('%')) return text;
  let decoded = text;
  for (let round = 0; round < MAX_DECODING_ROUNDS; round += 1) {
    const next = percentDecodedOnce(decoded);
    if (next === decoded) return decoded;
    decoded = next;
  }
  return null;
}

/**
 * A request's path for the log: no query string, percent-decoded as often as it was encoded (so `cnt%5Flive%5F…`,
 * a key encoded five times or one next to an invalid escape is seen whole), anything key- or token-shaped replaced,
 * and bounded. A path encoded more often than a request line can hold is not logged at all.
 */
export function loggablePath(url: string): string {
  const decoded = percentDecoded(url.split('?', 1)[0]!);
  const path = decoded === null ? REDACTED : redactSecrets(decoded);
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
