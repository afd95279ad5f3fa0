import type { Environment } from './schema.js';

/** A rule between variables, checked once the last variable it reads (`after`, in schema order) has been read. */
interface Rule {
  readonly after: keyof Environment;
  /** The error message when `env` breaks the rule, or null. */
  readonly broken: (env: Partial<Environment>) => string | null;
}

export const RULES: readonly Rule[] = [
  {
    after: 'DATABASE_READ_URL',
    broken: (env) =>
      env.DATABASE_READ_URL !== undefined && env.DATABASE_URL?.kind !== 'postgres'
        ? 'DATABASE_READ_URL needs a PostgreSQL DATABASE_URL: read replicas are for PostgreSQL only'
        : null,
  },
  {
    after: 'METRICS_TOKEN',
    broken: (env) =>
      env.METRICS_TOKEN !== undefined && env.METRICS_PORT !== undefined
        ? 'METRICS_TOKEN and METRICS_PORT are alternatives: set one of them'
        : null,
  },
  {
    after: 'OAUTH_EXTERNAL_JWKS_URL',
    broken: (env) =>
      (env.OAUTH_EXTERNAL_ISSUER === undefined) !== (env.OAUTH_EXTERNAL_JWKS_URL === undefined)
        ? 'OAUTH_EXTERNAL_JWKS_URL and OAUTH_EXTERNAL_ISSUER must be set together'
        : null,
  },
  {
    after: 'ADMIN_PORT',
    // Workers of a cluster would share one port between both apps, each connection going to either.
    broken: (env) =>
      env.ADMIN_TOKEN !== undefined && env.ADMIN_PORT !== 0 && env.ADMIN_PORT === env.PORT
        ? `ADMIN_PORT must differ from the public port (${env.ADMIN_PORT})`
        : null,
  },
];
