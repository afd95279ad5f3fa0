import { createHash, type Hash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError, InputError, PublicError } from '../domain/errors.js';
import { mediaTypeOf } from '../domain/media-type.js';
import type { Store } from '../store/store.js';
import { openText, sealText, type SecretSource } from './sealed-text.js';

export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
export const INVALID_IDEMPOTENCY_KEY_MESSAGE = 'Idempotency-Key must be 1 to 255 printable ASCII characters';
export const IDEMPOTENCY_IN_PROGRESS_MESSAGE = 'A request with this Idempotency-Key is still in progress';
export const IDEMPOTENCY_MISMATCH_MESSAGE =
  'This Idempotency-Key was used with another request (another body, content type or path) within the last 24 hours; use a new key';

const IN_PROGRESS_POLL_MS = 50;

/** An Idempotency-Key within its operation (`POST /admin/v1/users/u1/keys`), and what the request carried. */
export interface IdempotentRequest {
  scope: string;
  key: string;
  /** fingerprintOf the request: another request under the same key is refused (422). */
  fingerprint: string;
}

/** An answer to keep: its status and its JSON body. */
export interface IdempotentAnswer {
  status: number;
  body: string;
}

/** An answer as a request gives it, with the user it concerns (null: none), whose delete deletes it. */
export interface OwnedAnswer extends IdempotentAnswer {
  ownerId: string | null;
}

export interface IdempotencyOptions {
  /**
   * How old an unanswered claim of the same request must be to be taken over: longer than a request may run (twice
   * REQUEST_TIMEOUT_MS), so that only a claim whose process stopped is.
   */
  staleClaimMs: number;
  /** How long the same request waits for the first to finish before answering 409: less than a request may take. */
  inProgressWaitMs: number;
}

/** The Idempotency-Key header's value, or null without one; InputError naming the header when it is not 1–255 printable ASCII. */
export function parseIdempotencyKey(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(value)) throw new InputError(INVALID_IDEMPOTENCY_KEY_MESSAGE);
  return value;
}

/** What a request is, for its fingerprint: its method, its path (with any query) and its media type. */
export interface RequestHead {
  method: string;
  path: string;
  contentType: string | undefined;
}

/** A SHA-256 over the request's head, to be fed its body bytes as they arrive; `digest('hex')` is its fingerprint. */
export function fingerprintHasher(head: RequestHead): Hash {
  const mediaType = mediaTypeOf(head.contentType);
  return createHash('sha256').update(`${head.method}\0${head.path}\0${mediaType}\0`);
}

/** The fingerprint of a request whose whole body is at hand. */
export function fingerprintOf(head: RequestHead, body: Buffer): string {
  return fingerprintHasher(head).update(body).digest('hex');
}

/**
 * Runs the request once per Idempotency-Key, with Stripe's semantics, across processes and restarts: the same request
 * within 24 h gets the first answer again (`replayed`); another request under the key is a 422; while the first runs,
 * the same request waits for its answer (inProgressWaitMs), then gets 409. A 5xx answer or a failure is not kept: the key is
 * free for a retry. Kept answers are encrypted (AES-256-GCM, a key derived from the service key): a new API key's
 * answer holds its plaintext. An answer is kept for the user it concerns, and deleted with the user: a retry after it
 * runs anew.
 */
export async function runIdempotently(
  store: Pick<Store, 'idempotency' | 'oauth'>,
  request: IdempotentRequest,
  run: () => Promise<OwnedAnswer>,
  options: IdempotencyOptions,
): Promise<IdempotentAnswer & { replayed: boolean }> {
  const waitUntil = Date.now() + options.inProgressWaitMs;
  for (;;) {
    const now = Date.now();
    const claim = await store.idempotency.claim(
      request,
      request.fingerprint,
      new Date(now).toISOString(),
      new Date(now - options.staleClaimMs).toISOString(),
    );
    if (claim.state === 'claimed') return { ...(await runClaimed(store, request, run)), replayed: false };
    if (claim.state === 'replay') return { status: claim.status, body: await openAnswer(store.oauth, request, claim.body), replayed: true };
    if (claim.state === 'mismatch') throw new PublicError(422, IDEMPOTENCY_MISMATCH_MESSAGE);
    if (now >= waitUntil) throw new ConflictError(IDEMPOTENCY_IN_PROGRESS_MESSAGE);
    await sleep(IN_PROGRESS_POLL_MS);
  }
}

async function runClaimed(
  store: Pick<Store, 'idempotency' | 'oauth'>,
  request: IdempotentRequest,
  run: () => Promise<OwnedAnswer>,
): Promise<IdempotentAnswer> {
  let answer: OwnedAnswer;
  try {
    answer = await run();
  } catch (error) {
    await releaseQuietly(store, request);
    throw error;
  }
  if (answer.status >= 500) await releaseQuietly(store, request);
  else {
    const sealed = await sealAnswer(store.oauth, request, answer.body);
    await store.idempotency.complete(request, { ...answer, body: sealed }, new Date().toISOString());
  }
  return answer;
}

/** A release that fails leaves a claim that is taken over once stale; the request's own failure is what the caller needs. */
async function releaseQuietly(store: Pick<Store, 'idempotency'>, request: IdempotentRequest): Promise<void> {
  await store.idempotency.release(request).catch(() => undefined);
}

const ANSWER_KEY_PURPOSE = 'idempotent answers';

/** The stored answer is bound to its scope and key: moved to another key's row, it does not open. */
const boundTo = (request: IdempotentRequest) => `${request.scope}\0${request.key}`;

const sealAnswer = (secrets: SecretSource, request: IdempotentRequest, body: string) =>
  sealText(secrets, ANSWER_KEY_PURPOSE, boundTo(request), body);

const openAnswer = (secrets: SecretSource, request: IdempotentRequest, stored: string) =>
  openText(secrets, ANSWER_KEY_PURPOSE, boundTo(request), stored);
