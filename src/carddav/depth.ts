import { InputError } from '../domain/errors.js';

/** How deep a PROPFIND goes. The tree is two levels deep at most, so `infinity` is served as 1 (RFC 4918 §9.1 lets us). */
export type Depth = 0 | 1;

/** The Depth header (RFC 4918 §10.2): `0`, `1` or `infinity`; absent means infinity. Anything else is a 400. */
export function parseDepth(header: string | string[] | undefined): Depth {
  if (header === undefined) return 1;
  const value = Array.isArray(header) ? null : header.trim().toLowerCase();
  if (value === '0') return 0;
  if (value === '1' || value === 'infinity') return 1;
  throw new InputError('Header "Depth" must be 0, 1 or infinity');
}
