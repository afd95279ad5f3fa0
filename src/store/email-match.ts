import { newId } from '../domain/ids.js';
import type { DuplicateEmail, ImportEmails, ImportRecord } from './store.js';

/*
 * Emails are compared ignoring ASCII case only: SQLite's lower() folds nothing else, and PostgreSQL's lower() under
 * COLLATE "C" folds the same (each dialect's `emailKey`), so both databases and this code agree on every address
 * (migration 10's index).
 */

/** The email as imports compare it. */
export function emailKey(email: string): string {
  return email.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** The keys of the emails the records name, each once. */
export function emailKeysOf(records: readonly ImportRecord[]): string[] {
  const keys = records.flatMap(({ contact }) => (typeof contact.values.email === 'string' ? [emailKey(contact.values.email)] : []));
  return [...new Set(keys)];
}

/** Adds rows of `id, email_key` (in list order) to the holders of each key. */
export function addEmailHolders(holders: Map<string, string[]>, rows: readonly { id: string; email_key: string }[]): void {
  for (const { id, email_key: key } of rows) {
    const ids = holders.get(key) ?? [];
    ids.push(id);
    holders.set(key, ids);
  }
}

/** Who holds an email as the import goes: a stored contact, or one a record of the file writes. */
interface Holder {
  id: string | null;
  /** `contact <id>` or the record's label. */
  name: string;
}

export interface EmailPlan {
  /** The records, with the contact each writes when that was decided by its email (or made here, so later ones can). */
  records: ImportRecord[];
  matchedByEmail: number;
  duplicateEmails: DuplicateEmail[];
}

/**
 * Decides, record by record, what emails change in an import, given the owner's listable contacts holding each of
 * its emails (`stored`: key → ids, in list order). A record naming an email another contact holds, a stored one or
 * one an earlier record wrote, is a duplicate; with `match`, a record without id instead updates the first such
 * contact. A record with an id always writes that contact. Contacts are taken as they stand when the import's
 * transaction read them, and as each record leaves them.
 */
export function planEmails(
  records: readonly ImportRecord[],
  stored: ReadonlyMap<string, readonly string[]>,
  emails: ImportEmails,
): EmailPlan {
  const plan: EmailPlan = { records: [], matchedByEmail: 0, duplicateEmails: [] };
  if (emails === 'ignore') return { ...plan, records: [...records] };
  const holders = new Map<string, Holder[]>();
  const keyOf = new Map<string, string>();
  for (const [key, ids] of stored) {
    holders.set(
      key,
      ids.map((id) => ({ id, name: `contact ${id}` })),
    );
    for (const id of ids) keyOf.set(id, key);
  }
  for (const record of records) {
    const { label, contact } = record;
    const { email } = contact.values;
    const key = typeof email === 'string' ? emailKey(email) : null;
    const held = key === null ? [] : (holders.get(key) ?? []);
    const matched = contact.id === null && emails === 'match' ? (held[0]?.id ?? undefined) : undefined;
    // Made here when matching, in file order, so that a later record can match the contact this one makes.
    const id = matched ?? contact.id ?? (emails === 'match' ? newId() : null);
    if (matched !== undefined) plan.matchedByEmail++;
    else {
      const other = held.find((holder) => holder.id === null || holder.id !== id);
      if (other !== undefined) plan.duplicateEmails.push({ label, email: email as string, sameAs: other.name });
    }
    if (id !== null && email !== undefined) {
      const before = keyOf.get(id);
      if (before !== undefined && before !== key) {
        holders.set(
          before,
          holders.get(before)!.filter((holder) => holder.id !== id),
        );
        keyOf.delete(id);
      }
    }
    if (key !== null && (id === null || keyOf.get(id) !== key)) {
      const list = holders.get(key) ?? [];
      list.push({ id, name: label });
      holders.set(key, list);
      if (id !== null) keyOf.set(id, key);
    }
    plan.records.push(id === contact.id ? record : { label, contact: { ...contact, id } });
  }
  return plan;
}
