import type pg from 'pg';
import { CONTACT_VALUE_COLUMNS, postgresTypeOf, type ContactValueColumn } from '../columns.js';
import type { ContactWrite, ExistingContact } from '../contact-write.js';
import type { ImportRecord } from '../store.js';

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

function updateSql(columns: readonly ContactValueColumn[]): string {
  const rows = unnestRows(columns);
  return `UPDATE contacts AS c SET ${columns.map((column) => `${column} = ${rows.value(column)}`).join(', ')}
  FROM ${rows.source} WHERE c.id = u.id AND c.owner_id = $1::uuid`;
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

/** Writes waiting to be sent as one statement. */
interface Batch {
  mask: number;
  writes: ContactWrite[];
  ids: Set<string>;
}

const emptyBatch = (mask = 0): Batch => ({ mask, writes: [], ids: new Set() });

/**
 * Writes an import's contacts with the outcome of writing each record in turn, but in multi-row statements:
 * inserts are buffered; updates are buffered while they set the same columns (only those the record names).
 * Writes to different contacts commute, so a buffer is sent early only when order matters: before an update
 * of a contact still buffered (for insert or update), or when the updated columns change.
 */
export class ContactWriter {
  private readonly insertedIds = new Set<string>();
  private inserts = emptyBatch();
  private updates = emptyBatch();

  constructor(
    private readonly client: pg.PoolClient,
    private readonly ownerId: string,
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
    if (this.inserts.ids.has(id)) await this.flushInserts();
    const mask = CONTACT_VALUE_COLUMNS.reduce((bits, column, index) => (column in write.values ? bits | (1 << index) : bits), 0);
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
    if (writes.length > 0) await this.send('contacts_import_insert', INSERT_SQL, CONTACT_VALUE_COLUMNS, writes);
  }

  private async flushUpdates(nextMask: number): Promise<void> {
    const { mask, writes } = this.updates;
    this.updates = emptyBatch(nextMask);
    if (writes.length === 0) return;
    const columns = CONTACT_VALUE_COLUMNS.filter((_, index) => (mask & (1 << index)) !== 0);
    await this.send(`contacts_import_update_${mask.toString(16)}`, updateSql(columns), columns, writes);
  }

  private async send(name: string, text: string, columns: readonly ContactValueColumn[], writes: ContactWrite[]): Promise<void> {
    await this.client.query({
      name,
      text,
      values: [
        this.ownerId,
        writes.map((write) => write.id),
        ...columns.map((column) => writes.map((write) => encodeParameter(column, write.values[column]))),
      ],
    });
  }
}

function add(batch: Batch, write: ContactWrite): void {
  batch.writes.push(write);
  batch.ids.add(write.id);
}

/** One row's value in a column array: JSON text for jsonb, a text[] literal (`{"a","b \\"c\\""}`) for tags. */
function encodeParameter(column: ContactValueColumn, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (column === 'tags') return `{${(value as string[]).map((tag) => `"${tag.replace(/[\\"]/g, '\\$&')}"`).join(',')}}`;
  return postgresTypeOf(column) === 'jsonb' ? JSON.stringify(value) : (value as string);
}
