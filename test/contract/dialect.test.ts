import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dialect } from '../../src/store/contracts/dialect.js';
import { emailKey, linkedinUrlKey } from '../../src/domain/import-matching.js';
import { listableSql } from '../../src/store/listable.js';
import { dialectOf, type DatabaseTarget } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { POSTGRES_DIALECT } from '../../src/store/postgres/dialect.js';
import { SQLITE_DIALECT } from '../../src/store/sqlite/dialect.js';
import { describeEachBackend, dialectNameOf } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { LINKEDIN_URL_KEYS } from '../support/linkedin-urls.js';
import { contactRecord, createUser } from '../support/seed.js';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
const rejectedStatement = Object.assign(new Error('relation "contact" does not exist'), { code: '42P01' });

/** What each dialect says, as kysely's tests state the SQL each dialect produces. */
const DIALECTS: {
  dialect: Dialect;
  target: DatabaseTarget;
  printableUrl: string | null;
  isFalse: string;
  emailKey: string;
  countAsNumber: string;
  unreachable: boolean;
}[] = [
  {
    dialect: SQLITE_DIALECT,
    target: parseDatabaseUrl('file:/srv/contacts.db'),
    printableUrl: 'file:/srv/contacts.db',
    isFalse: 'c.is_self = 0',
    emailKey: 'lower(email)',
    countAsNumber: 'count(*)',
    unreachable: false,
  },
  {
    dialect: POSTGRES_DIALECT,
    target: parseDatabaseUrl('postgres://contacts:secret@db.internal/contacts'),
    printableUrl: null,
    isFalse: 'NOT c.is_self',
    emailKey: 'lower(email COLLATE "C")',
    countAsNumber: 'count(*)::int',
    unreachable: true,
  },
];

describe('each dialect', () => {
  for (const expected of DIALECTS) {
    const { dialect, target } = expected;
    describe(dialect.name, () => {
      it('is the dialect of the targets its DATABASE_URLs name', () => {
        expect(dialectOf(target)).toBe(dialect);
        expect(target.kind).toBe(dialect.name);
      });

      it('says how a printed command may repeat DATABASE_URL', () => {
        expect(dialect.printableUrl(target)).toBe(expected.printableUrl);
      });

      it('writes the SQL fragments shared code asks for', () => {
        expect(dialect.isFalse('c.is_self')).toBe(expected.isFalse);
        expect(dialect.emailKey('email')).toBe(expected.emailKey);
        expect(dialect.countAsNumber('count(*)')).toBe(expected.countAsNumber);
        expect(listableSql(dialect, '?', 'c')).toBe(`c.owner_id = ? AND c.merged_into IS NULL AND ${expected.isFalse}`);
      });

      it('creates schema_migrations only if it is missing', () => {
        expect(dialect.migrationsTableSql).toMatch(/^CREATE TABLE IF NOT EXISTS schema_migrations \(/);
      });

      it('calls an error unreachable only when another server could answer the same statement', () => {
        expect(dialect.isUnreachable(refused)).toBe(expected.unreachable);
        expect(dialect.isUnreachable(rejectedStatement)).toBe(false);
      });
    });
  }
});

describeEachBackend('the dialect on its database', (db) => {
  let other: OtherConnection;
  beforeAll(async () => {
    other = await openOtherConnection(db());
  });
  afterAll(async () => {
    await other.close();
  });

  it('is the store’s, and the one its DATABASE_URL names', () => {
    const { store, databaseUrl, backend } = db();
    expect(store.dialect.name).toBe(dialectNameOf(backend));
    expect(store.dialect).toBe(dialectOf(parseDatabaseUrl(databaseUrl)));
  });

  it('keys emails as emailKey does (ASCII folded alone) and counts listable contacts as a number, self row left out', async () => {
    const { store } = db();
    const { dialect } = store;
    const owner = await createUser(store);
    const emails = ['Ada.LOVELACE@Example.COM', 'ÉMILE@ÉCOLE.FR', 'straße@EXAMPLE.de'];
    await store.contacts.importContacts(
      owner.id,
      emails.map((email, index) => contactRecord({ name: `Person ${index}`, email })),
    );

    const keys = await other.rows<{ key: string }>(
      `SELECT ${dialect.emailKey('email')} AS key FROM contacts WHERE ${listableSql(dialect, '?')}`,
      owner.id,
    );
    expect(keys.map((row) => row.key).sort()).toEqual(emails.map(emailKey).sort());

    const [counted] = await other.rows<{ total: unknown }>(
      `SELECT ${dialect.countAsNumber('count(*)')} AS total FROM contacts WHERE ${listableSql(dialect, '?')}`,
      owner.id,
    );
    const [all] = await other.rows<{ total: unknown }>(
      `SELECT ${dialect.countAsNumber('count(*)')} AS total FROM contacts WHERE owner_id = ?`,
      owner.id,
    );
    expect(counted!.total).toBe(emails.length);
    expect(all!.total).toBe(emails.length + 1);
  });

  it('keys LinkedIn URLs as linkedinUrlKey does, and finds a key through migration 14’s index', async () => {
    const { store } = db();
    const { dialect } = store;
    const owner = await createUser(store);
    const urls = LINKEDIN_URL_KEYS.map(([url]) => url);
    await store.contacts.importContacts(
      owner.id,
      urls.map((url, index) => contactRecord({ name: `Person ${index}`, linkedin_url: url })),
    );

    const keys = await other.rows<{ url: string; key: string }>(
      `SELECT linkedin_url AS url, ${dialect.linkedinUrlKey('linkedin_url')} AS key FROM contacts WHERE ${listableSql(dialect, '?')}`,
      owner.id,
    );
    expect(new Map(keys.map(({ url, key }) => [url, key]))).toEqual(new Map(urls.map((url) => [url, linkedinUrlKey(url)])));

    const key = dialect.linkedinUrlKey('linkedin_url');
    const listable = `linkedin_url IS NOT NULL AND merged_into IS NULL AND ${dialect.isFalse('is_self')}`;
    const plan =
      dialect.name === 'sqlite'
        ? await other.rows<{ detail: string }>(
            `EXPLAIN QUERY PLAN SELECT id FROM contacts INDEXED BY contacts_linkedin_url
             WHERE owner_id = '${owner.id}' AND ${key} = 'linkedin.com/in/ada-l' AND ${listable}`,
          )
        : await other.rows<{ 'QUERY PLAN': string }>(
            `EXPLAIN SELECT id FROM contacts
             WHERE (owner_id::text || ${key}) = '${owner.id}' || 'linkedin.com/in/ada-l' AND ${listable}`,
          );
    const steps = plan.map((row) => Object.values(row).join(' ')).join('\n');
    expect(steps).toMatch(dialect.name === 'sqlite' ? /SEARCH .*contacts_linkedin_url/ : /Index Scan (using|on) contacts_linkedin_url/);
  });
});
