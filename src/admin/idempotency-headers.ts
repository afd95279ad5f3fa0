/** The request header naming the key a request is run once under (runIdempotently). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** `true` on an answer given again to the same request under its key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';
