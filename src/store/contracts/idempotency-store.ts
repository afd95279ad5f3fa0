/** A request's Idempotency-Key, within the operation it was sent to (`POST /admin/v1/users/u1/keys`). */
export interface IdempotencyKey {
  scope: string;
  key: string;
}

/** The answer an Idempotency-Key keeps: its status, its body, and the user it concerns, if any. */
export interface KeptAnswer {
  status: number;
  body: string;
  ownerId: string | null;
}

/**
 * What a claim of an Idempotency-Key found: the key was free (`claimed`: run the request, then complete or release);
 * the request ran already (`replay` its answer); the key came with another request (`mismatch`); or the request is
 * running elsewhere (`in_progress`).
 */
export type IdempotencyClaim =
  { state: 'claimed' } | { state: 'replay'; status: number; body: string } | { state: 'mismatch' } | { state: 'in_progress' };

/**
 * Idempotency-Keys and the answers they gave, shared by every process (Stripe's semantics). A key holds for
 * IDEMPOTENCY_WINDOW_MS from its claim; after that a claim takes it afresh.
 */
export interface IdempotencyStore {
  /**
   * Claims the key for the request whose fingerprint (a hash of method, path and body) is given. Of concurrent claims
   * of a free key exactly one is `claimed`. A claim of the same request made before `staleBefore` and never completed
   * is taken over: the process that made it is presumed gone (a request cannot run that long), and the key would
   * otherwise answer `in_progress` for the rest of its window.
   */
  claim(key: IdempotencyKey, fingerprint: string, now: string, staleBefore?: string): Promise<IdempotencyClaim>;
  /**
   * Keeps the claimed request's answer, for claims to replay. The body is stored as given: an answer holding a secret
   * (a new key) is for the caller to encrypt or leave out. An answer kept for a user (`ownerId`) is deleted with the
   * user, in the user's delete; when that user is gone already (deleted while the request ran), the answer is not
   * kept and the claim is forgotten, as release does.
   */
  complete(key: IdempotencyKey, answer: KeptAnswer, now: string): Promise<void>;
  /** Forgets a claim whose request failed without an answer to keep (a 5xx), so that a retry runs it; never a completed one. */
  release(key: IdempotencyKey): Promise<void>;
  /** Removes up to `maxRows` keys whose window had passed at `now`; returns how many. */
  pruneExpired(now: string, maxRows: number): Promise<number>;
}
