import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Contact, ContactField } from '../../src/domain/contact.js';
import { CONTACT_FIELDS_V1, type MigrationContactField } from '../../src/store/contact-fields-v1.js';
import { contactJsonExpression, namesAndValues, type ContactRow } from '../../src/store/contact-row.js';
import type { Migration } from '../../src/store/migrator.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations.js';

/** What a maintainer adds to Contact: a field every contact shows, and one shown only when set (as research_data). */
const NICKNAME: ContactField = { name: 'nickname' as keyof Contact, kind: 'text', nullable: true, optional: false, description: undefined };
const VERIFIED_AT: ContactField = {
  name: 'verified_at' as keyof Contact,
  kind: 'timestamp',
  nullable: false,
  optional: true,
  description: undefined,
};
const NEW_FIELDS = [NICKNAME, VERIFIED_AT];

/**
 * The store's modules, imported again over a copy of the contact's field table (CONTACT_FIELDS, which every column
 * list derives from) with the new fields: nickname before the service's timestamps, verified_at last.
 */
async function importWithNewFields() {
  vi.resetModules();
  vi.doMock('../../src/domain/contact.js', async (importOriginal) => {
    const actual = await importOriginal<typeof import('../../src/domain/contact.js')>();
    const timestamps = actual.CONTACT_FIELDS.findIndex((field) => field.name === 'created_at');
    const fields = [...actual.CONTACT_FIELDS];
    fields.splice(timestamps, 0, NICKNAME);
    return { ...actual, CONTACT_FIELDS: [...fields, VERIFIED_AT] };
  });
  try {
    return {
      columns: await import('../../src/store/columns.js'),
      contactRow: await import('../../src/store/contact-row.js'),
      migrations: {
        sqlite: (await import('../../src/store/sqlite/migrations.js')).SQLITE_MIGRATIONS,
        postgres: (await import('../../src/store/postgres/migrations.js')).POSTGRES_MIGRATIONS,
      },
    };
  } finally {
    vi.doUnmock('../../src/domain/contact.js');
    vi.resetModules();
  }
}

const mentionsNewField = (migration: Migration) => NEW_FIELDS.some((field) => migration.sql.includes(field.name));

describe('a field added to Contact', () => {
  let changed: Awaited<ReturnType<typeof importWithNewFields>>;
  beforeAll(async () => {
    changed = await importWithNewFields();
  });

  it('reaches the live column table (what the stores read and write)', () => {
    expect(changed.columns.CONTACT_COLUMNS).toEqual(expect.arrayContaining(['nickname', 'verified_at']));
    expect(changed.columns.OPTIONAL_COLUMNS).toEqual(['research_data', 'researched_at', 'verified_at']);
  });

  describe.each([
    { dialect: 'sqlite', released: SQLITE_MIGRATIONS },
    { dialect: 'postgres', released: POSTGRES_MIGRATIONS },
  ] as const)('on $dialect', ({ dialect, released }) => {
    it('leaves every released migration byte for byte as it was', () => {
      const sqlOf = (migrations: readonly Migration[]) => migrations.map(({ version, sql }) => ({ version, sql }));
      expect(sqlOf(changed.migrations[dialect])).toEqual(sqlOf(released));
    });

    it('appears in no released migration: only a new migration can add its column', () => {
      expect(changed.migrations[dialect].filter(mentionsNewField).map((migration) => migration.version)).toEqual([]);
    });
  });

  it('is left out of a contact where null when the schema shows it only when set', () => {
    const { CONTACT_COLUMNS, OPTIONAL_COLUMNS } = changed.columns;
    const row = Object.fromEntries(CONTACT_COLUMNS.map((column) => [column, null]));
    const fieldsShown = (verifiedAt: string | null) =>
      Object.keys(changed.contactRow.contactFromRow({ ...row, verified_at: verifiedAt } as unknown as ContactRow));
    const required = CONTACT_COLUMNS.filter((column) => !OPTIONAL_COLUMNS.includes(column));
    expect(fieldsShown(null)).toEqual(required);
    expect(fieldsShown('2024-05-01T09:30:00.000Z')).toEqual([...required, 'verified_at']);
  });
});

/**
 * The new migration's own list, V1 plus the fields (as src/store/README.md says), builds a contact's JSON in which a
 * field shown only when set is left out exactly when NULL, whichever optional fields are set.
 */
describe('the contact JSON of a new migration, from V1 plus an optional field', () => {
  const fields: readonly MigrationContactField[] = [...CONTACT_FIELDS_V1, VERIFIED_AT];
  const optional = fields.filter((field) => field.optional).map((field) => field.name);
  const expression = contactJsonExpression(
    fields,
    (pairs) => `json_object(${namesAndValues(pairs)})`,
    (field) => field.name,
  );
  const db = new Database(':memory:');
  afterAll(() => db.close());

  it.each(Array.from({ length: 2 ** optional.length }, (_, bits) => ({ set: optional.filter((_name, index) => bits & (1 << index)) })))(
    'holds every required field and, of the optional ones, $set',
    ({ set }) => {
      const shown = fields.filter((field) => !field.optional || set.includes(field.name)).map((field) => field.name);
      const row = fields.map(({ name }) => `${shown.includes(name) ? `'${name}'` : 'NULL'} AS ${name}`).join(', ');
      const { json } = db.prepare(`SELECT ${expression} AS json FROM (SELECT ${row})`).get() as { json: string };
      expect(Object.keys(JSON.parse(json) as object)).toEqual(shown);
    },
  );
});
