import type { Contact } from '../domain/contact.js';
import type { FoundContact } from './contracts/contact-store.js';

/**
 * How many soft-merge links a lookup by id follows. merge() keeps every chain one step long; the margin only
 * guards against rows written otherwise, and a longer (or circular) chain finds nothing.
 */
export const MAX_MERGE_HOPS = 3;

/** The last row of the merge chain that starts at the id asked for, with what decides whether it may be shown. */
export interface ChainEnd {
  contact: Contact;
  is_self: boolean;
  merged_into: string | null;
}

/** What get() returns for the end of the chain from `askedId` (lower-cased), or null when it is not listable. */
export function mergeChainResult(askedId: string, end: ChainEnd | undefined): FoundContact | null {
  if (!end || end.is_self || end.merged_into !== null) return null;
  return { contact: end.contact, mergedFrom: end.contact.id === askedId ? null : askedId };
}
