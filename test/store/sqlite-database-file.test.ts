import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { thrown } from '../support/thrown.js';

describe('SQLite: the database file a server opens', () => {
  const dir = mkdtempSync(join(tmpdir(), 'contacts-api-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is never created, nor its folder, when it must exist', async () => {
    const path = join(dir, 'missing', 'contacts.db');
    const error = thrown(() => openSqliteStore(path, { mustExist: true }));
    expect(String(error)).toContain(`No database at ${path}: create it with \`contacts-read-api migrate\``);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  it('is not ready while its file has not been migrated', async () => {
    const path = join(dir, 'empty.db');
    await openSqliteStore(path).close();
    const store = openSqliteStore(path, { mustExist: true });
    try {
      await expect(store.ping()).rejects.toThrow();
      await store.migrate();
      await store.ping();
    } finally {
      await store.close();
    }
  });

  it('says it is detached, and fails readiness, once its file is moved away or replaced', async () => {
    const path = join(dir, 'contacts.db');
    const created = openSqliteStore(path);
    await created.migrate();
    await created.close();
    const store = openSqliteStore(path, { mustExist: true });
    try {
      expect(store.detachedReason!()).toBeNull();
      await store.ping();
      renameSync(path, `${path}.away`);
      expect(store.detachedReason!()).toBe(`the database file ${path} is gone (deleted, or its folder moved)`);
      await expect(store.ping()).rejects.toThrow(/is gone/);
      renameSync(`${path}.away`, path);
      expect(store.detachedReason!()).toBeNull();
      // A backup restored over it: another file at the same path.
      copyFileSync(path, `${path}.restored`);
      renameSync(`${path}.restored`, path);
      expect(store.detachedReason!()).toBe(`the database file ${path} was replaced by another file`);
      await expect(store.ping()).rejects.toThrow(/replaced/);
    } finally {
      await store.close();
    }
  });
});
