import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import { normalizeContactInput } from '../../src/domain/contact-input.js';
import { indexContactWordsSql } from '../../src/store/sqlite/migrations/search-index.js';
import type { Store } from '../../src/store/store.js';
import { databaseBefore, type OldDatabase } from '../support/old-database.js';

const PORTABLE_SCHEMA = 6;

/** Names and emails that start with every kind of character the index trims, keeps or marks as a symbol. */
const LEADS = [
  ['Ada Lovelace', 'ada@example.com'],
  ['  Leading Spaces', ' spaced@example.com'],
  ['\tTabbed\nNewline\rReturn', null],
  ['"Quoted" Person', '"quoted"@example.com'],
  ["'Apostrophe O'Neil", "'apos@example.com"],
  ['¡Hola Mundo', '¿que@example.com'],
  ['«Guillemets» Name', '±plusminus@example.com'],
  ['…Ellipsis Trail', '\u2028separator@example.com'],
  ['「Bracketed」 Name', '〠postal@example.com'],
  ['\u00a0\u3000Wide Space', '@handle@example.com'],
  ['→ Arrow Pointer', '€euro@example.com'],
  ['😀 Emoji Smile', '🀄tile@example.com'],
  ['㈱ Kabushiki', '✓check@example.com'],
  ['²Squared', 'µmicro@example.com'],
  ['Ærøskøbing Ünal', 'łodz@example.com'],
  ['[Bracket] {Brace} ~Tilde', '_under+tag@example.com'],
  ['', ''],
  [null, '#hash@example.com'],
  [null, null],
] as const;
/** Each character of the blocks the index trims from a value's start (and its neighbours), leading a name. */
const EVERY_LEADING_CHARACTER = [
  [0x09, 0x7e],
  [0xa0, 0xbf],
  [0x2000, 0x206f],
  [0x3000, 0x3020],
].flatMap(([first, last]) => Array.from({ length: last! - first! + 1 }, (_, offset) => `${String.fromCodePoint(first! + offset)}Lead`));
const SEARCHES = [
  'ada',
  'a',
  'lovelace',
  'spaces',
  'tabbed',
  'return',
  'quoted',
  'apostrophe',
  'neil',
  'hola',
  'que',
  'guillemets',
  'plusminus',
  'ellipsis',
  'separator',
  'bracketed',
  'postal',
  'wide',
  'handle',
  'arrow',
  'euro',
  'emoji',
  'tile',
  'kabushiki',
  'check',
  'squared',
  'micro',
  'aeroskobing',
  'unal',
  'lodz',
  'bracket',
  'brace',
  'tilde',
  'under',
  'hash',
  'example',
  'com',
  'lead',
  'acme',
  'engineer',
  'school',
  'paris',
  'dash',
  'math',
  'self',
  'merged',
  'other',
  'e',
  'o',
];

describe(`migration ${PORTABLE_SCHEMA} (schema readable by SQLite 3.40) over existing contacts [sqlite]`, () => {
  let database: OldDatabase;
  let store: Store;
  const owner = newId();
  const other = newId();
  const contactIds = LEADS.map(() => newId());

  const indexEntries = async () => {
    await database.query(`DROP TABLE IF EXISTS temp.contact_word_entries;
      CREATE VIRTUAL TABLE temp.contact_word_entries USING fts5vocab(main, 'contact_words', 'instance')`);
    return database.query('SELECT term, doc, col, offset FROM temp.contact_word_entries ORDER BY doc, col, offset, term');
  };
  const searchResults = async () =>
    Promise.all(
      SEARCHES.map(async (query) => ({ query, found: (await store.contacts.search(owner, query, 50)).map((contact) => contact.name) })),
    );

  beforeAll(async () => {
    // A database as the releases before migration 6 left it, its index written by migration 4's triggers.
    database = await databaseBefore('sqlite', PORTABLE_SCHEMA, null);
    const { query, flag, tags } = database;
    const now = '2024-01-01T00:00:00.000Z';
    for (const [id, email] of [
      [owner, 'owner@example.com'],
      [other, 'other@example.com'],
    ]) {
      await query("INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, $2, 'pro', $3, $4)", [id, email, now, now]);
    }
    const insert = `INSERT INTO contacts (id, owner_id, is_self, merged_into, name, email, company, title, school, location, tags, created_at, updated_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;
    const at = (minute: number) => new Date(Date.UTC(2024, 0, 2, 0, minute)).toISOString();
    const otherFields = [
      ['Acme, Inc.', 'Engineer', 'École Polytechnique', 'Paris', tags(['math', 'poet'])],
      ['', '', '', '', tags([])],
      [null, null, null, null, null],
      ['—Dash Co', '(Lead) Engineer', null, '  Paris ', tags(['a b', '—dash', ''])],
    ];
    for (const [index, [name, email]] of LEADS.entries()) {
      await query(insert, [
        contactIds[index],
        owner,
        flag(false),
        null,
        name,
        email,
        ...otherFields[index % otherFields.length]!,
        at(index),
        at(index),
      ]);
    }
    for (const [index, name] of EVERY_LEADING_CHARACTER.entries()) {
      await query(insert, [newId(), owner, flag(false), null, name, null, null, null, null, null, null, at(100 + index), at(100 + index)]);
    }
    await query(insert, [newId(), owner, flag(true), null, 'Ada Self', 'owner@example.com', null, null, null, null, null, at(90), at(90)]);
    await query(insert, [newId(), owner, flag(false), contactIds[0], 'Ada Merged', null, null, null, null, null, null, at(91), at(91)]);
    await query(insert, [
      newId(),
      other,
      flag(false),
      null,
      'Ada Other',
      '«other@example.com',
      'Acme',
      null,
      null,
      null,
      null,
      at(92),
      at(92),
    ]);
    store = await openStore(parseDatabaseUrl(database.url));
  });
  afterAll(async () => {
    await store?.close();
    await database?.dispose();
  });

  it('indexes the same words at the same places, and every search finds the same contacts', async () => {
    const [entriesBefore, resultsBefore] = [await indexEntries(), await searchResults()];
    expect((await store.migrate())[0]).toBe(PORTABLE_SCHEMA);
    expect(await indexEntries()).toEqual(entriesBefore);
    expect(await searchResults()).toEqual(resultsBefore);
    expect(resultsBefore).toContainEqual({ query: 'arrow', found: ['→ Arrow Pointer'] });
    expect(resultsBefore).toContainEqual({ query: 'hola', found: ['¡Hola Mundo'] });
  });

  it('keeps the index equal to one built from scratch through direct SQL edits, merges, moves and deletes', async () => {
    const { query, flag, tags } = database;
    await query('UPDATE contacts SET name = $1, email = $2 WHERE id = $3', ['…Renamed «Ada»', 'renamed@example.com', contactIds[0]]);
    await query('UPDATE contacts SET tags = $1, company = NULL WHERE id = $2', [tags(['new tag']), contactIds[3]]);
    await query('UPDATE contacts SET merged_into = $1 WHERE id = $2', [contactIds[1], contactIds[2]]);
    await query('UPDATE contacts SET merged_into = NULL WHERE name = $1', ['Ada Merged']);
    await query('UPDATE contacts SET owner_id = $1 WHERE id = $2', [other, contactIds[10]]);
    await query('UPDATE contacts SET is_self = $1 WHERE owner_id = $2 AND is_self = $3', [flag(false), owner, flag(true)]);
    await query('UPDATE contacts SET is_self = $1 WHERE id = $2', [flag(true), contactIds[11]]);
    await query('DELETE FROM contacts WHERE id = $1', [contactIds[5]]);
    await query('DELETE FROM contacts WHERE id = $1', [contactIds[2]]);
    await store.contacts.merge(owner, contactIds[6]!, contactIds[7]!);
    await store.contacts.importContacts(owner, [
      { label: 'test', contact: normalizeContactInput({ id: contactIds[8]!, name: '〠 Re-imported', tags: ['x'] }) },
    ]);

    const maintained = await indexEntries();
    await query("INSERT INTO contact_words (contact_words) VALUES ('integrity-check')");
    await query("INSERT INTO contact_words (contact_words) VALUES ('delete-all')");
    await query(indexContactWordsSql('1'));
    expect(maintained).toEqual(await indexEntries());
    expect((await store.contacts.search(owner, 'renamed', 10)).map((contact) => contact.name)).toEqual(['…Renamed «Ada»']);
    expect(await store.contacts.search(owner, 'lovelace', 10)).toEqual([]);
  });
});
