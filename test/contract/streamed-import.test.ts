import { expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { importContacts } from '../../src/operations/contacts.js';
import { describeEachBackend } from '../support/backends.js';
import { ndjsonContacts, readBody } from '../support/contact-bodies.js';
import { createUser } from '../support/seed.js';

describeEachBackend('Streamed import', (db) => {
  const total = async (ownerId: string) => (await db().store.contacts.listPage(ownerId, { limit: 1, offset: 0 })).total;

  it('imports a 5 MB NDJSON stream, all of it in one transaction', async () => {
    const owner = await createUser(db().store);
    const bytes = ndjsonContacts(20_000);
    expect(bytes.length).toBeGreaterThan(5_000_000);

    const summary = await importContacts(db().store, { user: owner.id, file: readBody(bytes, 'application/x-ndjson') });

    expect(summary).toMatchObject({ imported: 20_000, created: 20_000, updated: 0 });
    expect(await total(owner.id)).toBe(20_000);
  });

  it('imports nothing from a 5 MB stream whose last record is bad, naming that record', async () => {
    const owner = await createUser(db().store);
    const bytes = ndjsonContacts(20_000, '{"name": "Last", "email": 42}');

    const refused = importContacts(db().store, { user: owner.id, file: readBody(bytes, 'application/x-ndjson') });

    await expect(refused).rejects.toThrow(new InputError('line 20001: field "email" must be a string or null'));
    expect(await total(owner.id)).toBe(0);
  });

  it('refuses an id an earlier batch named, naming both records; nothing is imported', async () => {
    const owner = await createUser(db().store);
    const id = '0190f5d2-7c3e-7a10-8b2c-3d4e5f607182';
    const lines = Array.from({ length: 2500 }, (_, i) =>
      JSON.stringify(i === 0 || i === 2400 ? { id, name: `Twice ${i}` } : { name: `C ${i}` }),
    );

    const refused = importContacts(db().store, { user: owner.id, file: readBody(Buffer.from(lines.join('\n')), 'application/x-ndjson') });

    await expect(refused).rejects.toThrow(new InputError(`line 2401: id ${id} already appears at line 1`));
    expect(await total(owner.id)).toBe(0);
  });

  it('merges a record into a contact a later batch makes, and lists 100 of many emails taken, counting all', async () => {
    const owner = await createUser(db().store);
    const [duplicate, survivor] = ['0190f5d2-7c3e-7a10-8b2c-3d4e5f600001', '0190f5d2-7c3e-7a10-8b2c-3d4e5f600002'];
    const lines = [
      JSON.stringify({ id: duplicate, name: 'Duplicate', merged_into: survivor }),
      ...Array.from({ length: 2500 }, (_, i) => JSON.stringify({ name: `C ${i}`, email: 'same@example.com' })),
      JSON.stringify({ id: survivor, name: 'Survivor' }),
    ];

    const summary = await importContacts(db().store, {
      user: owner.id,
      file: readBody(Buffer.from(lines.join('\n')), 'application/x-ndjson'),
    });

    expect(summary).toMatchObject({ imported: 2502, created: 2502, merged: 1 });
    expect(summary.duplicate_emails.count).toBe(2499);
    expect(summary.duplicate_emails.records).toHaveLength(100);
    expect(summary.duplicate_emails.records[0]).toEqual({ record: 'line 3', email: 'same@example.com', same_as: 'line 2' });
    expect(await total(owner.id)).toBe(2501);
  });
});
