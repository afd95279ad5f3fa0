/** How long a request's Idempotency-Key holds: its first answer is given again for a day, as Stripe does. */
export const IDEMPOTENCY_WINDOW_MS = 86_400_000;

/** The oldest claim time still within the window at `now` (ISO 8601): keys claimed before it are free again. */
export function idempotencyWindowStart(now: string): string {
  return new Date(Date.parse(now) - IDEMPOTENCY_WINDOW_MS).toISOString();
}
