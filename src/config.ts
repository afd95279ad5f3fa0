import { KEY_PREFIX_PATTERN } from './domain/api-key.js';
import { parseDatabaseUrl, type DatabaseTarget } from './store/open-store.js';

/** Settings read once from the environment at start-up. */
export interface Config {
  /** DATABASE_URL: unset → SQLite at ./data/contacts.db; `file:PATH`; `postgres://…`. */
  readonly database: DatabaseTarget;
  /** HOST (default 127.0.0.1). */
  readonly host: string;
  /** PORT (default 3000). */
  readonly port: number;
  /** API_KEY_PREFIX (default `cnt`): keys look like `<prefix>_live_<secret>`. */
  readonly apiKeyPrefix: string;
  /** LOG_LEVEL (default info): fatal, error, warn, info, debug, trace or silent. */
  readonly logLevel: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Parses and freezes the configuration; a bad value throws ConfigError naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return Object.freeze({
    database: Object.freeze(read('DATABASE_URL', () => parseDatabaseUrl(env.DATABASE_URL))),
    host: env.HOST?.trim() || '127.0.0.1',
    port: parsePort(env.PORT, 'PORT'),
    apiKeyPrefix: read('API_KEY_PREFIX', () => parseKeyPrefix(env.API_KEY_PREFIX)),
    logLevel: read('LOG_LEVEL', () => parseLogLevel(env.LOG_LEVEL)),
  });
}

/** A TCP port 0–65535 (0 picks a free one); `undefined` or empty gives 3000. */
export function parsePort(text: string | undefined, name: string): number {
  if (text === undefined || text.trim() === '') return 3000;
  const port = /^\d{1,5}$/.test(text.trim()) ? Number(text) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) throw new ConfigError(`${name} must be a port number from 0 to 65535; got "${text}"`);
  return port;
}

function parseKeyPrefix(text: string | undefined): string {
  const prefix = text?.trim() || 'cnt';
  if (!KEY_PREFIX_PATTERN.test(prefix)) {
    throw new Error(`must be 2–16 lowercase letters or digits starting with a letter; got "${prefix}"`);
  }
  return prefix;
}

function parseLogLevel(text: string | undefined): string {
  const level = text?.trim() || 'info';
  if (!LOG_LEVELS.includes(level)) throw new Error(`must be one of ${LOG_LEVELS.join(', ')}; got "${level}"`);
  return level;
}

function read<T>(name: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    const message = (error as Error).message.replace(/^DATABASE_URL /, '');
    throw new ConfigError(`${name} ${message}`);
  }
}
