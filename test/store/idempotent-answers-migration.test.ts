import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import { openStore } from '../../src/store/open-store.js';
import { parseDatabaseUrl } from '../../src/domain/database-url.js';
import type { Store } from '../../src/store/store.js';
import { databaseBefore, migrationBackends, type OldDatabase } from '../support/old-database.js';

const ANSWERS_BY_USER = 13;
const postgresAdminUrl = inject('postgresAdminUrl');

for (const { backend, available } of migrationBackends(postgresAdminUrl)) {
  describe.runIf(available)(`migration ${ANSWERS_BY_USER} (idempotent answers by user) over kept answers [${backend}]`, () => {
    let database: OldDatabase;
    let store: Store;
    const owner = newId();
    const scope = `POST /admin/v1/users/${owner}/keys`;

    beforeAll(async () => {
      // An answer kept before answers had a user, and its user.
      database = await databaseBefore(backend, ANSWERS_BY_USER, postgresAdminUrl);
      const now = new Date().toISOString();
      await database.query("INSERT INTO users (id, email, plan, created_at, updated_at) VALUES ($1, 'kept@example.com', 'pro', $2, $3)", [
        owner,
        now,
        now,
      ]);
      await database.query(
        "INSERT INTO idempotency_keys (scope, idempotency_key, fingerprint, status, body, created_at, completed_at) VALUES ($1, 'k', 'f', 201, 'sealed', $2, $3)",
        [scope, now, now],
      );
      store = await openStore(parseDatabaseUrl(database.url));
    });
    afterAll(async () => {
      await store?.close();
      await database?.dispose();
    });

    it('keeps the answers kept before, with no user: they replay within their day, and deleting a user leaves them', async () => {
      expect((await store.migrate())[0]).toBe(ANSWERS_BY_USER);
      expect(await store.users.delete(owner)).toBe(true);
      expect(await store.idempotency.claim({ scope, key: 'k' }, 'f', new Date().toISOString())).toEqual({
        state: 'replay',
        status: 201,
        body: 'sealed',
      });
    });
  });
}
