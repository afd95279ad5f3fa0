import type pg from 'pg';
import { columnKind, CONTACT_VALUE_COLUMNS, type ContactValueColumn } from '../columns.js';
import type { ContactWrite, ExistingContact } from '../contact-write.js';
import type { ImportMatchField } from '../../domain/import-matching.js';
import { addHolders, matchKeySql, type StoredHolders } from '../import-match.js';
import type { ImportOutcome, ImportRecord } from '../contracts/contact-store.js';
import { POSTGRES_DIALECT, postgresTypeOf } from './dialect.js';

/** During an import: contacts inserted or updated per statement. */
const INSERT_BATCH = 1000;
const UPDATE_BATCH = 1000;

/**
 * Rows for a multi-row statement: `unnest($2::uuid[], $3::text[], …) AS u(id, …)` zips one array parameter
 * per column ($1 is the owner). Tags travel as text[] literals, one per row, and are cast back in `value`.
 */
function unnestRows(columns: readonly ContactValueColumn[]): { source: string; value: (column: ContactValueColumn) => string } {
  const arrays = columns.map((column, index) => `$${index + 3}::${column === 'tags' ? 'text' : postgresTypeOf(column)}[]`);
  return {
    source: `unnest($2::uuid[], ${arrays.join(', ')}) AS u(id, ${columns.join(', ')})`,
    value: (column) => (column === 'tags' ? 'u.tags::text[]' : `u.${column}`),
  };
}

const INSERT_ROWS = unnestRows(CONTACT_VALUE_COLUMNS);
const INSERT_SQL = `INSERT INTO contacts (id, owner_id, ${CONTACT_VALUE_COLUMNS.join(', ')})
  SELECT u.id, $1::uuid, ${CONTACT_VALUE_COLUMNS.map(INSERT_ROWS.value).join(', ')} FROM ${INSERT_ROWS.source}`;

/**
 * Sets the compared columns on the contacts of the batch that differ in one of them, and updated_at as ContactWrite
 * says; the import's time is the last parameter.
 */
function updateSql(compared: readonly ContactValueColumn[]): string {
  const rows = unnestRows([...compared, 'updated_at']);
  // Timestamps are compared as the API shows them, to the millisecond: a host product's now() keeps microseconds.
  // Objects are compared as the text the API shows (json has no equality, and member order shows).
  const stored = (column: ContactValueColumn) =>
    columnKind(column) === 'timestamp' ? `date_trunc('milliseconds', c.${column})` : comparable(column, `c.${column}`);
  const sent = (column: ContactValueColumn) => comparable(column, rows.value(column));
  const now = `$${compared.length + 4}::timestamptz`;
  return `UPDATE contacts AS c SET ${compared.map((column) => `${column} = ${rows.value(column)}, `).join('')}
  updated_at = CASE WHEN ${stored('updated_at')} = u.updated_at THEN ${now} ELSE u.updated_at END
  FROM ${rows.source} WHERE c.id = u.id AND c.owner_id = $1::uuid
  AND (${compared.map(stored).join(', ')}) IS DISTINCT FROM (${compared.map(sent).join(', ')})`;
}

function comparable(column: ContactValueColumn, expression: string): string {
  return postgresTypeOf(column) === 'json' ? `${expression}::text` : expression;
}

/** Who holds each id of the batch, whatever the owner. */
export async function findExisting(client: pg.PoolClient, records: readonly ImportRecord[]): Promise<Map<string, ExistingContact>> {
  const ids = records.flatMap(({ contact }) => (contact.id !== null ? [contact.id] : []));
  const found = new Map<string, ExistingContact>();
  if (ids.length === 0) return found;
  const { rows } = await client.query<ExistingContact & { id: string }>(
    'SELECT id, owner_id, is_self FROM contacts WHERE id = ANY($1::uuid[])',
    [ids],
  );
  for (const { id, owner_id, is_self } of rows) found.set(id, { owner_id, is_self });
  return found;
}

// One lookup of the field's index (migrations 10 and 14) per key: the owner's id is part of the indexed expression, and
// the listable rule (listable.ts) is written without its owner_id term, which would let the planner pick
// contacts_listable instead. OFFSET 0 keeps the subquery a lookup per key: flattened into a join, a planner without
// statistics (right after a large import) read every listable contact of the owner once per batch of keys, computing
// its key (a batch of 1,000 LinkedIn URLs among 20,000 contacts: 190 to 300 ms, against 13 ms).
function holdersSql(field: ImportMatchField): string {
  return `SELECT c.id, k.key FROM unnest($2::text[]) AS k(key)
  CROSS JOIN LATERAL (SELECT id, created_at FROM contacts
    WHERE (owner_id::text || ${matchKeySql(POSTGRES_DIALECT, field)}) = $1::uuid::text || k.key
    AND ${field} IS NOT NULL AND merged_into IS NULL AND NOT is_self OFFSET 0) AS c
  ORDER BY c.created_at, c.id`;
}
const HOLDERS_SQL = { email: holdersSql('email'), linkedin_url: holdersSql('linkedin_url') };
/** During an import: keys looked up per query. */
const KEY_LOOKUP_BATCH = 1000;

/** The owner's listable contacts holding each of the keys of each field, in list order. */
export async function findHolders(
  client: pg.PoolClient,
  ownerId: string,
  keys: Record<ImportMatchField, string[]>,
): Promise<StoredHolders> {
  const found = { email: new Map<string, string[]>(), linkedin_url: new Map<string, string[]>() };
  if (keys.email.length + keys.linkedin_url.length === 0) return found;
  // Right after a large import, before autovacuum analyses it, the table looks empty to the planner, which then
  // scans it whole once per batch of keys (a re-import of 100,000 contacts took 39 s instead of 12 s).
  await client.query('SET LOCAL enable_seqscan = off');
  for (const field of ['email', 'linkedin_url'] as const) {
    for (let start = 0; start < keys[field].length; start += KEY_LOOKUP_BATCH) {
      const { rows } = await client.query<{ id: string; key: string }>({
        name: `contacts_import_${field}_holders`,
        text: HOLDERS_SQL[field],
        values: [ownerId, keys[field].slice(start, start + KEY_LOOKUP_BATCH)],
      });
      addHolders(found[field], rows);
    }
  }
  await client.query('SET LOCAL enable_seqscan TO DEFAULT');
  return found;
}

/** Writes waiting to be sent as one statement. */
interface Batch {
  mask: number;
  writes: ContactWrite[];
  ids: Set<string>;
}

const emptyBatch = (mask = 0): Batch => ({ mask, writes: [], ids: new Set() });

/**
 * Writes an import's contacts with the outcome of writing each record in turn, but in multi-row statements:
 * inserts are buffered; updates are buffered while they compare the same columns (those the record names).
 * Writes to different contacts commute, so a buffer is sent early only when order matters: before an update
 * of a contact still buffered (for insert or update), or when the compared columns change.
 */
export class ContactWriter {
  readonly counts: Pick<ImportOutcome, 'created' | 'updated' | 'unchanged'> = { created: 0, updated: 0, unchanged: 0 };
  private readonly insertedIds = new Set<string>();
  private inserts = emptyBatch();
  private updates = emptyBatch();

  constructor(
    private readonly client: pg.PoolClient,
    private readonly ownerId: string,
    /** The import's time: updated_at of what it changes. */
    private readonly now: string,
  ) {}

  /** The contact this import inserted under `id`, if any. */
  written(id: string): ExistingContact | undefined {
    return this.insertedIds.has(id) ? { owner_id: this.ownerId, is_self: false } : undefined;
  }

  async write(write: ContactWrite): Promise<void> {
    const { id } = write;
    if (write.kind === 'insert') {
      this.insertedIds.add(id);
      add(this.inserts, write);
      if (this.inserts.writes.length >= INSERT_BATCH) await this.flushInserts();
      return;
    }
    if (write.compared.length === 0) {
      this.counts.unchanged++;
      return;
    }
    if (this.inserts.ids.has(id)) await this.flushInserts();
    const mask = CONTACT_VALUE_COLUMNS.reduce((bits, column, index) => (write.compared.includes(column) ? bits | (1 << index) : bits), 0);
    if (this.updates.ids.has(id) || mask !== this.updates.mask) await this.flushUpdates(mask);
    add(this.updates, write);
    if (this.updates.writes.length >= UPDATE_BATCH) await this.flushUpdates(mask);
  }

  async flush(): Promise<void> {
    await this.flushInserts();
    await this.flushUpdates(0);
  }

  private async flushInserts(): Promise<void> {
    const { writes } = this.inserts;
    this.inserts = emptyBatch();
    if (writes.length === 0) return;
    await this.send('contacts_import_insert', INSERT_SQL, CONTACT_VALUE_COLUMNS, writes);
    this.counts.created += writes.length;
  }

  private async flushUpdates(nextMask: number): Promise<void> {
    const { mask, writes } = this.updates;
    this.updates = emptyBatch(nextMask);
    if (writes.length === 0) return;
    const compared = CONTACT_VALUE_COLUMNS.filter((_, index) => (mask & (1 << index)) !== 0);
    const name = `contacts_import_update_${mask.toString(16)}`;
    const updated = await this.send(name, updateSql(compared), [...compared, 'updated_at'], writes, [this.now]);
    this.counts.updated += updated;
    this.counts.unchanged += writes.length - updated;
  }

  /** Sends one multi-row statement; how many rows it wrote. */
  private async send(
    name: string,
    text: string,
    columns: readonly ContactValueColumn[],
    writes: ContactWrite[],
    after: readonly string[] = [],
  ): Promise<number> {
    const result = await this.client.query({
      name,
      text,
      values: [
        this.ownerId,
        writes.map((write) => write.id),
        ...columns.map((column) => writes.map((write) => encodeParameter(column, write.values[column]))),
        ...after,
      ],
    });
    return result.rowCount ?? 0;
  }
}

function add(batch: Batch, write: ContactWrite): void {
  batch.writes.push(write);
  batch.ids.add(write.id);
}

/** One row's value in a column array: JSON text for json, a text[] literal (`{"a","b \\"c\\""}`) for tags. */
function encodeParameter(column: ContactValueColumn, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (column === 'tags') return `{${(value as string[]).map((tag) => `"${tag.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
  return postgresTypeOf(column) === 'json' ? JSON.stringify(value) : (value as string);
}
