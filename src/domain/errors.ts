/** The caller's input is wrong; the message says what and is safe to show. Nothing was changed. */
export class InputError extends Error {
  override name = 'InputError';
}

/** A referenced record (user, key, contact) does not exist for the caller. */
export class NotFoundError extends Error {
  override name = 'NotFoundError';
}
