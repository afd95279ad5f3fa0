import { emailKey, linkedinUrlKey, type ImportMatchField } from '../domain/import-matching.js';
import { newId } from '../domain/ids.js';
import type { Dialect } from './contracts/dialect.js';
import type { DuplicateEmail, ImportMatching, ImportRecord } from './contracts/contact-store.js';

/*
 * Emails and LinkedIn URLs are compared by their keys (domain/import-matching.ts), ASCII case folded alone: SQLite's
 * lower() folds nothing else, and PostgreSQL's lower() under COLLATE "C" folds the same, so both databases and this
 * code agree on every value. Each dialect writes the same keys in SQL (`emailKey`, `linkedinUrlKey`), as migration 10
 * (contacts_email) and 14 (contacts_linkedin_url) index them.
 */

/** The key of each field a record can be matched on. */
const MATCH_KEYS: Readonly<Record<ImportMatchField, (value: string) => string>> = {
  email: emailKey,
  linkedin_url: linkedinUrlKey,
};

/**
 * The SQL of linkedinUrlKey over a column, from the dialect's ASCII lower case and its position of a text in another
 * (1-based, 0 when absent): the scheme, then `www.`, then from the first `?` or `#` on, then trailing slashes go.
 */
export function linkedinUrlKeySql(lower: string, position: (text: string, sought: string) => string): string {
  const noScheme = `substr(${lower}, CASE WHEN substr(${lower}, 1, 8) = 'https://' THEN 9 WHEN substr(${lower}, 1, 7) = 'http://' THEN 8 ELSE 1 END)`;
  const noWww = `substr(${noScheme}, CASE WHEN substr(${noScheme}, 1, 4) = 'www.' THEN 5 ELSE 1 END)`;
  return `rtrim(substr(${noWww}, 1, ${position(`replace(${noWww}, '#', '?') || '?'`, "'?'")} - 1), '/')`;
}

/** Per field, the index of the owner's listable contacts by its key (migrations 10 and 14). */
export const MATCH_INDEXES: Readonly<Record<ImportMatchField, string>> = {
  email: 'contacts_email',
  linkedin_url: 'contacts_linkedin_url',
};

/** The SQL of the field's key over its column, as its index has it. */
export function matchKeySql(dialect: Pick<Dialect, 'emailKey' | 'linkedinUrlKey'>, field: ImportMatchField): string {
  return field === 'email' ? dialect.emailKey(field) : dialect.linkedinUrlKey(field);
}

/** The owner's listable contacts holding each key of a field (key → ids, in list order), as each store looks them up. */
export type StoredHolders = Record<ImportMatchField, ReadonlyMap<string, readonly string[]>>;

/** The fields each record is matched on: the import's, or by default its origin's (a LinkedIn export: linkedin_url). */
function matchFieldsOf(record: ImportRecord, matching: ImportMatching): readonly ImportMatchField[] {
  if (matching === 'ignore') return [];
  return matching.match ?? record.origin?.matchOn ?? [];
}

/**
 * The keys of each field that planMatches needs the stored holders of, each once: every email (duplicates are
 * reported whatever the matching), and the LinkedIn URLs of the records matched on them.
 */
export function keysToLookUp(records: readonly ImportRecord[], matching: ImportMatching): Record<ImportMatchField, string[]> {
  const keys = { email: new Set<string>(), linkedin_url: new Set<string>() };
  if (matching === 'ignore') return { email: [], linkedin_url: [] };
  for (const record of records) {
    const email = keyOf(record, 'email');
    if (email !== null) keys.email.add(email);
    const url = keyOf(record, 'linkedin_url');
    if (url !== null && matchFieldsOf(record, matching).includes('linkedin_url')) keys.linkedin_url.add(url);
  }
  return { email: [...keys.email], linkedin_url: [...keys.linkedin_url] };
}

/** Adds rows of `id, key` (in list order) to the holders of each key. */
export function addHolders(holders: Map<string, string[]>, rows: readonly { id: string; key: string }[]): void {
  for (const { id, key } of rows) {
    const ids = holders.get(key) ?? [];
    ids.push(id);
    holders.set(key, ids);
  }
}

/** Who holds a key as the import goes: a stored contact, or one a record of the file writes. */
interface Holder {
  id: string | null;
  /** `contact <id>` or the record's label. */
  name: string;
}

/** The holders of one field's keys, as the records planned so far leave them. */
class FieldHolders {
  private readonly holders = new Map<string, Holder[]>();
  private readonly keyOf = new Map<string, string>();

  constructor(stored: ReadonlyMap<string, readonly string[]>) {
    for (const [key, ids] of stored) {
      this.holders.set(
        key,
        ids.map((id) => ({ id, name: `contact ${id}` })),
      );
      for (const id of ids) this.keyOf.set(id, key);
    }
  }

  held(key: string | null): readonly Holder[] {
    return key === null ? [] : (this.holders.get(key) ?? []);
  }

  /** The record writes contact `id` (null: a contact made when written) with the field's key; `named`: it names the field. */
  write(id: string | null, key: string | null, named: boolean, label: string): void {
    if (id !== null && named) {
      const before = this.keyOf.get(id);
      if (before !== undefined && before !== key) {
        this.holders.set(
          before,
          this.holders.get(before)!.filter((holder) => holder.id !== id),
        );
        this.keyOf.delete(id);
      }
    }
    if (key !== null && (id === null || this.keyOf.get(id) !== key)) {
      const list = this.holders.get(key) ?? [];
      list.push({ id, name: label });
      this.holders.set(key, list);
      if (id !== null) this.keyOf.set(id, key);
    }
  }
}

export interface MatchPlan {
  /** The records, with the contact each writes when that was decided by matching (or made here, so later ones can). */
  records: ImportRecord[];
  matchedByEmail: number;
  matchedByLinkedinUrl: number;
  duplicateEmails: DuplicateEmail[];
}

/** A record matched on a LinkedIn URL first: a profile names one person, where an email may be shared. */
const MATCH_ORDER: readonly ImportMatchField[] = ['linkedin_url', 'email'];

/**
 * Decides, record by record, which contact each record without id updates and which emails are duplicates, given the
 * owner's listable contacts holding each key keysToLookUp gives (`stored`). A record naming an email another contact
 * holds, a stored one or one an earlier record wrote, is a duplicate. A record without id matched on a field (the
 * import's `match`, else its origin's) updates the first contact holding the same key, LinkedIn URL before email,
 * unless that is how it matched. A record with an id always writes that contact. Contacts are taken as they stand
 * when the import's transaction read them, and as each record leaves them; records may come a batch at a time, each
 * batch's holders looked up once the batches before it are written.
 */
export function planMatches(records: readonly ImportRecord[], stored: StoredHolders, matching: ImportMatching): MatchPlan {
  const plan: MatchPlan = { records: [], matchedByEmail: 0, matchedByLinkedinUrl: 0, duplicateEmails: [] };
  if (matching === 'ignore') return { ...plan, records: [...records] };
  const holders = { email: new FieldHolders(stored.email), linkedin_url: new FieldHolders(stored.linkedin_url) };
  for (const record of records) {
    const { label, contact } = record;
    const fields = matchFieldsOf(record, matching);
    const keys = { email: keyOf(record, 'email'), linkedin_url: keyOf(record, 'linkedin_url') };
    let matchedOn: ImportMatchField | undefined;
    let matched: string | undefined;
    for (const field of contact.id === null ? MATCH_ORDER.filter((candidate) => fields.includes(candidate)) : []) {
      matched = holders[field].held(keys[field])[0]?.id ?? undefined;
      if (matched !== undefined) {
        matchedOn = field;
        break;
      }
    }
    // Made here when matching, in file order, so that a later record can match the contact this one makes.
    const id = matched ?? contact.id ?? (fields.length > 0 ? newId() : null);
    if (matchedOn === 'email') plan.matchedByEmail++;
    if (matchedOn === 'linkedin_url') plan.matchedByLinkedinUrl++;
    if (matchedOn !== 'email') {
      const other = holders.email.held(keys.email).find((holder) => holder.id === null || holder.id !== id);
      if (other !== undefined) plan.duplicateEmails.push({ label, email: contact.values.email as string, sameAs: other.name });
    }
    for (const field of MATCH_ORDER) holders[field].write(id, keys[field], contact.values[field] !== undefined, label);
    plan.records.push(id === contact.id ? record : { ...record, contact: { ...contact, id } });
  }
  return plan;
}

/** The key of the record's value of the field; null when it has none (or an empty key, which matches nothing). */
function keyOf(record: ImportRecord, field: ImportMatchField): string | null {
  const value = record.contact.values[field];
  if (typeof value !== 'string') return null;
  const key = MATCH_KEYS[field](value);
  return key === '' ? null : key;
}
