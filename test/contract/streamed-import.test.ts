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

    const summary = await importContacts(db().store, { user: owner.id, file: await readBody(bytes, 'application/x-ndjson') });

    expect(summary).toMatchObject({ imported: 20_000, created: 20_000, updated: 0 });
    expect(await total(owner.id)).toBe(20_000);
  });

  it('imports nothing from a 5 MB stream whose last record is bad, naming that record', async () => {
    const owner = await createUser(db().store);
    const bytes = ndjsonContacts(20_000, '{"name": "Last", "email": 42}');

    const refused = readBody(bytes, 'application/x-ndjson').then((file) => importContacts(db().store, { user: owner.id, file }));

    await expect(refused).rejects.toThrow(new InputError('line 20001: field "email" must be a string or null'));
    expect(await total(owner.id)).toBe(0);
  });
});
