import type { IncomingMessage } from 'node:http';

/** The pace a body must keep on average once it has taken BODY_READ_TIMEOUT_MS: one more second per 64 KiB. */
export const BODY_MIN_BYTES_PER_SECOND = 64 * 1024;

export const BODY_READ_TIMEOUT_MESSAGE = 'Request body timed out: it stalled, or arrived too slowly';

/** How the reading of one request's body has gone, in milliseconds since the epoch and bytes. */
export interface BodyProgress {
  /** When the server began to wait for the body. */
  startedAt: number;
  /** The bytes received since then. */
  bytes: number;
  /** When a byte last arrived, or the server's reader last held the client up. */
  lastProgressAt: number;
  /** How long the server's reader held the client up (it had bytes it did not take): the server's time, not the client's. */
  heldMs: number;
}

/**
 * Whether a body is overdue: no byte of it has arrived for `timeoutMs`, or it is behind the pace it must keep, taking
 * more than `timeoutMs` plus one second per BODY_MIN_BYTES_PER_SECOND received. A stalled or trickled body is thus
 * refused about `timeoutMs` after it began (or stalled), while one that streams megabytes a second (a large import)
 * takes as long as it needs. Time the server's reader held the client up counts for neither.
 */
export function bodyOverdue(progress: BodyProgress, now: number, timeoutMs: number): boolean {
  const taken = now - progress.startedAt - progress.heldMs;
  const allowed = timeoutMs + (progress.bytes * 1000) / BODY_MIN_BYTES_PER_SECOND;
  return now - progress.lastProgressAt >= timeoutMs || taken >= allowed;
}

/** Whether a request off a connection has a body still to arrive (not one made up in a test: `complete` is Node's). */
export function bodyStillArriving(request: IncomingMessage): boolean {
  const declared = request.headers['content-length'];
  const hasBody = request.headers['transfer-encoding'] !== undefined || (declared !== undefined && Number(declared) !== 0);
  return hasBody && request.complete === false;
}
