import { InputError } from './errors.js';

export const DAY_MS = 86_400_000;

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS } as const;
const MAX_MS = 100 * 365 * UNIT_MS.d;

/**
 * Parses a duration such as `30s`, `15m`, `12h` or `90d` into milliseconds; with `milliseconds`, `250ms` too (a
 * setting that tests shorten, such as WEBHOOK_RETRY_SCHEDULE).
 */
export function parseDuration(text: string, options: { milliseconds?: boolean } = {}): number {
  const match = (options.milliseconds ? /^(\d+)(ms|[smhd])$/ : /^(\d+)([smhd])$/).exec(text.trim());
  const amount = match ? Number(match[1]) : Number.NaN;
  const ms = match ? amount * UNIT_MS[match[2] as keyof typeof UNIT_MS] : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > MAX_MS) {
    const units = options.milliseconds ? 'ms, s, m, h or d (e.g. 500ms, 30s, 90d)' : 's, m, h or d (e.g. 30s, 90d)';
    throw new InputError(`Invalid duration "${text}"; use a positive number followed by ${units}`);
  }
  return ms;
}
