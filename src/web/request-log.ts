import { LogController, type FastifyBaseLogger, type FastifyServerOptions, type FastifyReply, type FastifyRequest } from 'fastify';

/** The message of the one line each answered request writes. */
export const REQUEST_COMPLETED_MESSAGE = 'request completed';

/**
 * One `request completed` line per request, once its answer is written, under its request id (`reqId`): the request
 * (method, path, route and remote address, as the logger's `req` serializer writes them), the status and the time taken
 * (issue 35: Fastify's `incoming request` line, written at the start of every request, doubled the log's cost for
 * nothing an operator reads). An answer that fails once under way is logged at error, with the error.
 *
 * The line is written by a child of the service's logger without its redaction paths: they name `authorization` and
 * `headers` keys, which this line never has (its fields are the serializers' and Fastify's numbers), and walking them
 * cost every request a copy of the line's objects. Every other line keeps them.
 */
export class OneLineRequestLog extends LogController {
  private readonly lines: FastifyBaseLogger;

  constructor(logger: FastifyBaseLogger) {
    super({});
    this.lines = logger.child({}, { redact: { paths: [], censor: '[redacted]' } });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
      return;
    }
    this.lines.info({ reqId: request.id, req: request, res: reply, responseTime: reply.elapsedTime }, REQUEST_COMPLETED_MESSAGE);
  }
}

/**
 * A request's logger, made only when something logs through it: most requests never do (their one line is written
 * by OneLineRequestLog), and a pino child per request cost more than the line itself.
 */
class LazyRequestLogger {
  private made: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Record<string, unknown>,
    private readonly options: object,
  ) {}

  private get logger(): FastifyBaseLogger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  private write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    const logger = this.logger;
    (logger[level] as (...line: unknown[]) => void).apply(logger, args);
  }

  child(bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: each request's `request.log`, made lazily (LazyRequestLogger). */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
