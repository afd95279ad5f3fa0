import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Contact } from '../../src/domain/contact.js';
import { newId } from '../../src/domain/ids.js';
import { paginationOf } from '../../src/domain/pagination.js';
import { CONTACT_COLUMNS, columnKind } from '../../src/store/columns.js';
import { contactFromRow, type ContactRow } from '../../src/store/contact-row.js';
import type { Store } from '../../src/store/store.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection, type OtherConnection } from '../support/other-connection.js';
import { contactRecord, createKey, createUser, importNumberedContacts } from '../support/seed.js';

const NETWORK = 1500;
const STRIDE_EDGES = [0, 199, 200, 201, 777, 1400];
const LIMITS = [1, 50, 100];
const LISTABLE = 'owner_id = ? AND merged_into IS NULL AND NOT is_self';

/** The page as a plain query computes it from scratch: OFFSET over the listable rows, decoded to the API shape. */
async function pageFromScratch(other: OtherConnection, ownerId: string, offset: number, limit: number): Promise<Contact[]> {
  const rows = await other.rows<Record<string, unknown>>(
    `SELECT ${CONTACT_COLUMNS.join(', ')} FROM contacts WHERE ${LISTABLE} ORDER BY created_at, id LIMIT ? OFFSET ?`,
    ownerId,
    limit,
    offset,
  );
  return rows.map((row) => {
    for (const column of CONTACT_COLUMNS) {
      if (columnKind(column) === 'json' && typeof row[column] === 'string') row[column] = JSON.parse(row[column] as string);
    }
    return contactFromRow(row as unknown as ContactRow);
  });
}

async function countFromScratch(other: OtherConnection, ownerId: string): Promise<number> {
  const [row] = await other.rows<{ total: number | string }>(`SELECT count(*) AS total FROM contacts WHERE ${LISTABLE}`, ownerId);
  return Number(row!.total);
}

async function listingRow(other: OtherConnection, ownerId: string): Promise<{ total: number; version: number }> {
  const [row] = await other.rows<{ total: number; version: number | string }>(
    'SELECT total, version FROM owner_listing WHERE owner_id = ?',
    ownerId,
  );
  return { total: row!.total, version: Number(row!.version) };
}

interface StepContext {
  store: Store;
  other: OtherConnection;
  ownerId: string;
  otherOwnerId: string;
  keyId: string;
  /** The owner's listable contact ids in list order before the step. */
  ids: string[];
}

interface Step {
  name: string;
  /** Whether the step writes the owner's contacts, so the owner's listing version must move. */
  touchesOwner: boolean;
  write(context: StepContext): Promise<void>;
}

const MINUTE = 60_000;
const START = Date.parse('2024-01-01T00:00:00.000Z');

const STEPS: Step[] = [
  { name: 'nothing (caches filled)', touchesOwner: false, write: async () => {} },
  {
    name: 'an import of new contacts spread across the whole order',
    touchesOwner: true,
    write: async ({ store, ownerId }) => {
      const records = Array.from({ length: 40 }, (_, index) => {
        const at = new Date(START + index * 37).toISOString();
        const research_data = index % 2 === 0 ? null : { note: 'n' };
        return contactRecord({ name: `Inserted ${index}`, tags: ['new'], research_data, created_at: at, updated_at: at });
      });
      await store.contacts.importContacts(ownerId, records);
    },
  },
  {
    name: 'an import updating existing contacts: new names, and five moved to the front',
    touchesOwner: true,
    write: async ({ store, ownerId, ids }) => {
      const renamed = ids.slice(300, 330).map((id) => contactRecord({ name: `Renamed ${id.slice(-6)}`, enrichment: { seen: true } }, id));
      const moved = ids.slice(1200, 1205).map((id) => contactRecord({ created_at: new Date(START - MINUTE).toISOString() }, id));
      await store.contacts.importContacts(ownerId, [...renamed, ...moved]);
    },
  },
  {
    name: 'merges through the store',
    touchesOwner: true,
    write: async ({ store, ownerId, ids }) => {
      await store.contacts.merge(ownerId, ids[5]!, ids[6]!);
      await store.contacts.merge(ownerId, ids[400]!, ids[900]!);
      await store.contacts.merge(ownerId, ids[900]!, ids[1300]!);
    },
  },
  { name: 'a plan change', touchesOwner: false, write: async ({ store, ownerId }) => void (await store.users.setPlan(ownerId, 'free')) },
  { name: 'a key revocation', touchesOwner: false, write: async ({ store, keyId }) => void (await store.keys.revoke(keyId)) },
  {
    name: 'direct SQL merging twenty contacts in one statement',
    touchesOwner: true,
    write: async ({ other, ownerId, ids }) => {
      const duplicates = ids.slice(190, 210);
      await other.run(
        `UPDATE contacts SET merged_into = ? WHERE owner_id = ? AND id IN (${duplicates.map(() => '?').join(', ')})`,
        ids[1000],
        ownerId,
        ...duplicates,
      );
    },
  },
  {
    name: 'direct SQL unmerging every merged contact',
    touchesOwner: true,
    write: async ({ other, ownerId }) =>
      other.run('UPDATE contacts SET merged_into = NULL WHERE owner_id = ? AND merged_into IS NOT NULL', ownerId),
  },
  {
    name: 'direct SQL inserting contacts in the middle of the order',
    touchesOwner: true,
    write: async ({ other, ownerId }) => {
      for (const position of [199, 600, 1399]) {
        const at = new Date(START + position).toISOString();
        await other.run(
          'INSERT INTO contacts (id, owner_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
          newId(),
          ownerId,
          `Direct ${position}`,
          at,
          at,
        );
      }
    },
  },
  {
    name: 'direct SQL deleting contacts',
    touchesOwner: true,
    write: async ({ other, ownerId, ids }) => {
      const gone = [ids[0]!, ids[201]!, ids[777]!];
      await other.run(`DELETE FROM contacts WHERE owner_id = ? AND id IN (?, ?, ?)`, ownerId, ...gone);
    },
  },
  {
    name: 'direct SQL changing only a field the list shows, not its order or count',
    touchesOwner: true,
    write: async ({ other, ownerId, ids }) =>
      other.run('UPDATE contacts SET description = ? WHERE owner_id = ? AND id = ?', 'Edited', ownerId, ids[1401]),
  },
  {
    name: 'direct SQL that matches no row',
    touchesOwner: false,
    write: async ({ other, ownerId }) =>
      other.run('UPDATE contacts SET name = ? WHERE owner_id = ? AND id = ?', 'Nobody', ownerId, newId()),
  },
  {
    name: 'direct SQL giving contacts around the stride edges one millisecond, ordered by microseconds where stored',
    touchesOwner: true,
    write: async ({ other, ownerId, ids }) => {
      for (const edge of [200, 400, 1000]) {
        const group = ids.slice(edge - 10, edge + 10);
        // Microseconds in reverse id order, so where they are stored they, not the id, decide the order.
        for (const [index, id] of group.entries()) {
          const at = other.instant(START + edge, 999 - index);
          await other.run('UPDATE contacts SET created_at = ? WHERE owner_id = ? AND id = ?', at, ownerId, id);
        }
      }
    },
  },
  {
    name: 'direct SQL and an import on another owner',
    touchesOwner: false,
    write: async ({ store, other, otherOwnerId }) => {
      await other.run("UPDATE contacts SET name = 'Other edited' WHERE owner_id = ?", otherOwnerId);
      await importNumberedContacts(store, otherOwnerId, 10, 'Other later', START + 700);
    },
  },
];

describeEachBackend('Listing caches and database-kept counts stay coherent with every writer', (db) => {
  let store: Store;
  let other: OtherConnection;
  let ownerId: string;
  let otherOwnerId: string;
  let keyId: string;
  let version = 0;

  beforeAll(async () => {
    store = db().store;
    other = await openOtherConnection(db());
    ownerId = (await createUser(store)).id;
    otherOwnerId = (await createUser(store)).id;
    keyId = (await createKey(store, ownerId)).id;
    // The two owners' contacts share instants, so a page leaking the other owner's rows would show.
    await importNumberedContacts(store, otherOwnerId, 50, 'Other', START);
    await importNumberedContacts(store, ownerId, NETWORK, 'Person', START);
    version = (await listingRow(other, ownerId)).version;
  });
  afterAll(async () => {
    await other?.close();
  });

  for (const step of STEPS) {
    it(`after ${step.name}, every page and total equals a from-scratch query`, async () => {
      const ids = (await pageFromScratch(other, ownerId, 0, 10 * NETWORK)).map((contact) => contact.id);
      // Read first, so the step's write lands on warm caches (sort keys and pages of the previous state).
      await store.contacts.listPageJson(ownerId, { offset: 1400, limit: 50 });
      await step.write({ store, other, ownerId, otherOwnerId, keyId, ids });

      const total = await countFromScratch(other, ownerId);
      const listing = await listingRow(other, ownerId);
      expect(listing.total).toBe(total);
      if (step.touchesOwner) expect(listing.version).toBeGreaterThan(version);
      else expect(listing.version).toBe(version);
      version = listing.version;
      expect((await listingRow(other, otherOwnerId)).total).toBe(await countFromScratch(other, otherOwnerId));

      const offsets = [...STRIDE_EDGES, total - 1, total, total + 500];
      for (const offset of offsets) {
        for (const limit of LIMITS) {
          const expected = { contacts: await pageFromScratch(other, ownerId, offset, limit), total };
          // Twice: the second read is answered from the page cache.
          for (let read = 0; read < 2; read += 1) {
            const page = await store.contacts.listPageJson(ownerId, { offset, limit });
            expect(JSON.parse(page.json.toString()), `offset ${offset}, limit ${limit}`).toEqual({
              data: expected.contacts,
              pagination: paginationOf({ offset, limit }, expected.contacts.length, total),
            });
            expect([page.returned, page.total]).toEqual([expected.contacts.length, total]);
          }
          expect(await store.contacts.listPage(ownerId, { offset, limit })).toEqual(expected);
        }
      }
      const otherTotal = await countFromScratch(other, otherOwnerId);
      expect(await store.contacts.listPage(otherOwnerId, { offset: 0, limit: 100 })).toEqual({
        contacts: await pageFromScratch(other, otherOwnerId, 0, 100),
        total: otherTotal,
      });
    });
  }
});

describeEachBackend('Concurrent writes of one owner, each ending in an update of its listing state', (db) => {
  it('all succeed — imports updating the same contacts in opposite orders, and merges — and the count stays true', async () => {
    const store = db().store;
    const other = await openOtherConnection(db());
    try {
      const ownerId = (await createUser(store)).id;
      await importNumberedContacts(store, ownerId, 2000, 'Person', START);
      const ids = (await pageFromScratch(other, ownerId, 0, 2000)).map((contact) => contact.id);
      const writes = Array.from({ length: 8 }, (_, index) => {
        const order = index % 2 === 0 ? ids : [...ids].reverse();
        const records = order.map((id) => contactRecord({ title: `Pass ${index}` }, id));
        return [store.contacts.importContacts(ownerId, records), store.contacts.merge(ownerId, ids[100 + index]!, ids[1500 + index]!)];
      });
      const outcomes = await Promise.allSettled(writes.flat());
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
      expect((await listingRow(other, ownerId)).total).toBe(await countFromScratch(other, ownerId));
      expect(await countFromScratch(other, ownerId)).toBe(2000 - 8);
    } finally {
      await other.close();
    }
  });
});
