import { CONTACT_VALUE_COLUMNS, JSON_COLUMNS, type ContactValueColumn } from '../columns.js';
import type { ContactWrite, ExistingContact } from '../contact-write.js';
import type { ImportOutcome } from '../contracts/contact-store.js';
import type { Row, StatementCache } from './statements.js';

const INSERT_SQL = `INSERT INTO contacts (id, owner_id, ${CONTACT_VALUE_COLUMNS.join(', ')})
  VALUES (?, ?, ${CONTACT_VALUE_COLUMNS.map(() => '?').join(', ')})`;

/** Writes an import's contacts one statement each, inside the caller's write transaction. */
export class ContactWriter {
  readonly counts: Pick<ImportOutcome, 'created' | 'updated' | 'unchanged'> = { created: 0, updated: 0, unchanged: 0 };

  constructor(
    private readonly statements: StatementCache,
    private readonly ownerId: string,
    /** The import's time: updated_at of what it changes. */
    private readonly now: string,
  ) {}

  /** Who holds `id`, whatever the owner. */
  existing(id: string): ExistingContact | undefined {
    const row = this.statements.get('SELECT owner_id, is_self FROM contacts WHERE id = ?').get(id) as Row | undefined;
    return row && { owner_id: row.owner_id as string, is_self: row.is_self === 1 };
  }

  write(write: ContactWrite): void {
    if (write.kind === 'insert') {
      this.statements
        .get(INSERT_SQL)
        .run(write.id, this.ownerId, ...CONTACT_VALUE_COLUMNS.map((column) => encodeValue(column, write.values[column])));
      this.counts.created++;
      return;
    }
    const changed = write.compared.length > 0 && this.update(write);
    this.counts[changed ? 'updated' : 'unchanged']++;
  }

  private update({ id, values, compared }: Extract<ContactWrite, { kind: 'update' }>): boolean {
    const encoded = compared.map((column) => encodeValue(column, values[column]));
    const sql = `UPDATE contacts SET ${compared.map((column) => `${column} = ?, `).join('')}
      updated_at = CASE WHEN updated_at IS ? THEN ? ELSE ? END
      WHERE id = ? AND owner_id = ? AND (${compared.map((column) => `${column} IS NOT ?`).join(' OR ')})`;
    const { updated_at: updatedAt } = values;
    return this.statements.get(sql).run(...encoded, updatedAt, this.now, updatedAt, id, this.ownerId, ...encoded).changes > 0;
  }
}

function encodeValue(column: ContactValueColumn, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  return JSON_COLUMNS.has(column) ? JSON.stringify(value) : value;
}
