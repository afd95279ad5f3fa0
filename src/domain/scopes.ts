import { InputError } from './errors.js';

export const CONTACTS_READ = 'contacts:read';
export const KNOWN_SCOPES = [CONTACTS_READ] as const;
export type Scope = (typeof KNOWN_SCOPES)[number];

/** Parses a comma- or space-separated scope list; an empty string means a key with no scope. */
export function parseScopes(text: string): Scope[] {
  const scopes = text
    .split(/[\s,]+/)
    .map((scope) => scope.trim())
    .filter((scope) => scope.length > 0);
  for (const scope of scopes) {
    if (!(KNOWN_SCOPES as readonly string[]).includes(scope)) {
      throw new InputError(`Unknown scope "${scope}"; known scopes: ${KNOWN_SCOPES.join(', ')}`);
    }
  }
  return [...new Set(scopes)] as Scope[];
}
