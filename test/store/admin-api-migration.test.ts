import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store } from '../../src/store/store.js';
import { databaseBefore, migrationBackends, type OldDatabase } from '../support/old-database.js';

const ADMIN_API = 11;
const postgresAdminUrl = inject('postgresAdminUrl');

for (const { backend, available } of migrationBackends(postgresAdminUrl)) {
  describe.runIf(available)(`migration ${ADMIN_API} (admin API) over existing keys and OAuth records [${backend}]`, () => {
    let database: OldDatabase;
    let store: Store;
    const owner = newId();
    const keys = { revoked: newId(), kept: newId() };
    const later = '2099-01-01T00:00:00.000Z';
    const found = (kind: string, idHash: string) => store.oauth.find(kind, idHash, new Date().toISOString());

    beforeAll(async () => {
      // A database as the releases before the admin API left it: a key, and OAuth records bound to keys by payload alone.
      database = await databaseBefore(backend, ADMIN_API, postgresAdminUrl);
      const { query, tags } = database;
      const now = new Date().toISOString();
      await query("INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, 'owner@example.com', 'pro', $2, $3)", [
        owner,
        now,
        now,
      ]);
      for (const id of Object.values(keys)) {
        await query('INSERT INTO api_keys (id, owner_id, scopes, secret_hash, created_at) VALUES ($1, $2, $3, $4, $5)', [
          id,
          owner,
          tags(['contacts:read']),
          `hash-${id}`,
          now,
        ]);
      }
      const insert = 'INSERT INTO oauth_records (kind, id_hash, payload, grant_id, expires_at) VALUES ($1, $2, $3, $4, $5)';
      await query(insert, ['Grant', 'grant', JSON.stringify({ accountId: keys.revoked, clientId: 'c' }), null, later]);
      await query(insert, ['AccessToken', 'token', JSON.stringify({ accountId: keys.revoked, grantId: 'g' }), 'g', later]);
      await query(insert, ['AccessToken', 'kept', JSON.stringify({ accountId: keys.kept, grantId: 'h' }), 'h', later]);
      await query(insert, ['Interaction', 'interaction', JSON.stringify({ session: { accountId: keys.revoked } }), null, later]);
      store = await openStore(parseDatabaseUrl(database.url));
    });
    afterAll(async () => {
      await store?.close();
      await database?.dispose();
    });

    it('leaves keys made before without a display form', async () => {
      // Migrations after it apply too (migrate() applies every pending one).
      expect((await store.migrate())[0]).toBe(ADMIN_API);
      expect((await store.keys.listForOwner(owner)).map((key) => key.start)).toEqual([null, null]);
    });

    it("binds existing records to the key their payload names, so revoking it removes them (an interaction's nested account is not one)", async () => {
      await store.keys.revoke(keys.revoked);
      expect(await found('Grant', 'grant')).toBeNull();
      expect(await found('AccessToken', 'token')).toBeNull();
      expect(await found('AccessToken', 'kept')).not.toBeNull();
      expect(await found('Interaction', 'interaction')).not.toBeNull();
    });
  });
}
