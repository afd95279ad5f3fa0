import { ConflictError } from '../domain/errors.js';

/** What a create or an update is told when another user holds the id or the email (ignoring case). */
export function userConflict(column: 'id' | 'email', value: string): ConflictError {
  return new ConflictError(`A user with ${column} ${value} already exists`);
}
