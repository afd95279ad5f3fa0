import { CONTACT_VALUE_COLUMNS, JSON_COLUMNS, type ContactValueColumn } from '../columns.js';
import type { ContactWrite, ExistingContact } from '../contact-write.js';
import type { Row, StatementCache } from './statements.js';

const INSERT_SQL = `INSERT INTO contacts (id, owner_id, ${CONTACT_VALUE_COLUMNS.join(', ')})
  VALUES (?, ?, ${CONTACT_VALUE_COLUMNS.map(() => '?').join(', ')})`;

/** Writes an import's contacts one statement each, inside the caller's write transaction. */
export class ContactWriter {
  constructor(
    private readonly statements: StatementCache,
    private readonly ownerId: string,
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
      return;
    }
    const columns = CONTACT_VALUE_COLUMNS.filter((column) => column in write.values);
    const sql = `UPDATE contacts SET ${columns.map((column) => `${column} = ?`).join(', ')} WHERE id = ? AND owner_id = ?`;
    this.statements.get(sql).run(...columns.map((column) => encodeValue(column, write.values[column])), write.id, this.ownerId);
  }
}

function encodeValue(column: ContactValueColumn, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  return JSON_COLUMNS.has(column) ? JSON.stringify(value) : value;
}
