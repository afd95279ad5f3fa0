/** A bad environment variable or option; its message names it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
