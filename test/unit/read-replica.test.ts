import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { Contact } from '../../src/domain/contact.js';
import { isPostgresConnectionError } from '../../src/store/postgres/connection-error.js';
import { POSTGRES_DIALECT } from '../../src/store/postgres/dialect.js';
import { withReadReplica, type ReplicaLog } from '../../src/store/read-replica.js';
import type { ContactStore, Store } from '../../src/store/store.js';

const PAGE = { limit: 10, offset: 0 };
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5433'), { code: 'ECONNREFUSED' });

/** A store whose contact reads answer with its own name, or throw `failure` while it is set. */
function fakeStore(name: string) {
  const calls: string[] = [];
  const state = { failure: null as unknown, closed: false };
  const answer = async <T>(method: string, value: T): Promise<T> => {
    calls.push(method);
    if (state.failure !== null) throw state.failure;
    return value;
  };
  const IMPORTED = {
    created: 1,
    updated: 0,
    unchanged: 0,
    merged: 0,
    matchedByEmail: 0,
    matchedByLinkedinUrl: 0,
    duplicateEmails: [],
    duplicateEmailCount: 0,
  };
  const contacts: ContactStore = {
    listPage: () => answer('listPage', { contacts: [], total: name === 'replica' ? 1 : 2 }),
    listPageJson: () => answer('listPageJson', { json: Buffer.from('{}'), returned: 0, total: name === 'replica' ? 1 : 2, version: 1 }),
    listingVersion: () => answer('listingVersion', name === 'replica' ? 1 : 2),
    get: () => answer('get', { contact: { id: name } as Contact, mergedFrom: null }),
    getMany: () => answer('getMany', [{ key: { created_at: name, id: name }, updatedAt: name, json: '{}' }]),
    search: () => answer('search', [{ id: name } as Contact]),
    importContacts: () => answer('importContacts', IMPORTED),
    importBatches: () => answer('importBatches', IMPORTED),
    merge: () => answer('merge', undefined),
    delete: () => answer('delete', 1),
    changeLog: () => answer('changeLog', { currentSeq: 1, changesFrom: 0 }),
    readChanges: () => answer('readChanges', { log: { currentSeq: 1, changesFrom: 0 }, records: [] }),
    readListed: () => answer('readListed', { log: { currentSeq: 1, changesFrom: 0 }, contacts: [] }),
    countChangesAfter: () => answer('countChangesAfter', 0),
    positionAt: () => answer('positionAt', { seq: 1, after: null }),
  };
  const store = {
    dialect: POSTGRES_DIALECT,
    users: {} as Store['users'],
    keys: {} as Store['keys'],
    oauth: {} as Store['oauth'],
    idempotency: {} as Store['idempotency'],
    webhooks: {} as Store['webhooks'],
    contacts,
    bulkImport: () => answer('bulkImport', { usersCreated: 0, contacts: 0 }),
    migrate: () => answer('migrate', [1]),
    pruneChanges: () => answer('pruneChanges', 0),
    ping: () => answer('ping', undefined),
    close: async () => {
      state.closed = true;
      if (name === 'failing-close') throw new Error('close failed');
    },
  } satisfies Store;
  return { store, calls, state };
}

function recordingLog() {
  const lines: { level: 'warn' | 'info'; details: object; message: string }[] = [];
  const log: ReplicaLog = {
    warn: (details, message) => lines.push({ level: 'warn', details, message }),
    info: (details, message) => lines.push({ level: 'info', details, message }),
  };
  return { log, lines };
}

function setup(options: { retryAfterMs?: number; warnIntervalMs?: number } = {}) {
  const primary = fakeStore('primary');
  const replica = fakeStore('replica');
  const clock = { now: 1_000_000 };
  const { log, lines } = recordingLog();
  const store = withReadReplica(primary.store, replica.store, { log, now: () => clock.now, ...options });
  const servedBy = async () => ((await store.contacts.listPage('owner', PAGE)).total === 1 ? 'replica' : 'primary');
  return { primary, replica, clock, lines, store, servedBy };
}

describe('withReadReplica routing', () => {
  it('sends list (and its version), get and search to the replica', async () => {
    const { store, replica, primary } = setup();
    expect((await store.contacts.listPage('owner', PAGE)).total).toBe(1);
    expect((await store.contacts.listPageJson('owner', PAGE)).total).toBe(1);
    expect(await store.contacts.listingVersion('owner')).toBe(1);
    expect((await store.contacts.get('owner', 'id'))?.contact.id).toBe('replica');
    expect((await store.contacts.getMany('owner', ['id']))[0]?.key.id).toBe('replica');
    expect((await store.contacts.search('owner', 'q', 5))[0]?.id).toBe('replica');
    expect(replica.calls).toEqual(['listPage', 'listPageJson', 'listingVersion', 'get', 'getMany', 'search']);
    expect(primary.calls).toEqual([]);
  });

  it('keeps keys, users, Idempotency-Keys, imports, merges, migrations and readiness on the primary, so key checks never read the replica', async () => {
    const { store, replica, primary } = setup();
    expect(store.keys).toBe(primary.store.keys);
    expect(store.users).toBe(primary.store.users);
    expect(store.idempotency).toBe(primary.store.idempotency);
    await store.contacts.importContacts('owner', []);
    await store.contacts.merge('owner', 'a', 'b');
    await store.migrate();
    await store.ping();
    expect(primary.calls).toEqual(['importContacts', 'merge', 'migrate', 'ping']);
    expect(replica.calls).toEqual([]);
  });

  it('close() closes both stores, even when one of them fails to close', async () => {
    const primary = fakeStore('failing-close');
    const replica = fakeStore('replica');
    const store = withReadReplica(primary.store, replica.store, { log: recordingLog().log });
    await expect(store.close()).rejects.toThrow('close failed');
    expect(primary.state.closed).toBe(true);
    expect(replica.state.closed).toBe(true);
  });
});

describe('withReadReplica fallback when the replica cannot answer', () => {
  it('serves the read from the primary after a connection-level error, and logs a warning naming the reason', async () => {
    const { replica, lines, servedBy } = setup();
    replica.state.failure = refused;
    expect(await servedBy()).toBe('primary');
    expect(lines).toEqual([
      {
        level: 'warn',
        details: { fallbacks: 1, reason: 'ECONNREFUSED' },
        message: 'read replica unavailable; contact reads fall back to the primary',
      },
    ]);
  });

  it('does not fall back on an error about the statement itself: it reaches the caller', async () => {
    const { replica, primary, store } = setup();
    replica.state.failure = Object.assign(new Error('syntax error'), { code: '42601' });
    await expect(store.contacts.listPage('owner', PAGE)).rejects.toThrow('syntax error');
    expect(primary.calls).toEqual([]);
  });

  it('leaves the replica alone for retryAfterMs, then probes it with one read and returns to it once it answers', async () => {
    const { replica, clock, lines, servedBy } = setup({ retryAfterMs: 5_000 });
    replica.state.failure = refused;
    await servedBy();
    replica.state.failure = null;
    clock.now += 4_999;
    expect(await servedBy()).toBe('primary');
    expect(replica.calls).toHaveLength(1);
    clock.now += 1;
    expect(await servedBy()).toBe('replica');
    expect(await servedBy()).toBe('replica');
    expect(lines.at(-1)).toEqual({
      level: 'info',
      details: { fallbacks: 1 },
      message: 'read replica is answering again; contact reads go to it',
    });
  });

  it('lets only one read probe the replica at a time; the others stay on the primary meanwhile', async () => {
    const { replica, clock, store } = setup({ retryAfterMs: 1_000 });
    replica.state.failure = refused;
    await store.contacts.listPage('owner', PAGE);
    clock.now += 1_000;
    const results = await Promise.all([1, 2, 3].map(() => store.contacts.listPage('owner', PAGE)));
    expect(results.map((page) => page.total)).toEqual([2, 2, 2]);
    expect(replica.calls).toHaveLength(2);
  });

  it('rate-limits the warning: one per interval, carrying the count of reads that fell back in between', async () => {
    const { replica, clock, lines, servedBy } = setup({ retryAfterMs: 0, warnIntervalMs: 60_000 });
    replica.state.failure = refused;
    for (let i = 0; i < 50; i += 1) await servedBy();
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    clock.now += 60_000;
    await servedBy();
    const warnings = lines.filter((line) => line.level === 'warn');
    expect(warnings).toHaveLength(2);
    expect(warnings[1]!.details).toEqual({ fallbacks: 50, reason: 'ECONNREFUSED' });
  });
});

describe('isPostgresConnectionError', () => {
  it.each([
    ['refused', refused],
    ['reset', { code: 'ECONNRESET' }],
    ['connection class 08', { code: '08006' }],
    ['admin shutdown', { code: '57P01' }],
    ['starting up or shutting down', { code: '57P03' }],
    ['too many connections', { code: '53300' }],
    ['hot standby conflict with recovery', { code: '40001' }],
    ['dropped connection', new Error('Connection terminated unexpectedly')],
    ['pool connect timeout', new Error('timeout exceeded when trying to connect')],
    ['every address refused', new AggregateError([refused, refused], 'connect failed')],
  ])('is true for %s', (_name, error) => {
    expect(isPostgresConnectionError(error)).toBe(true);
  });

  it.each([
    ['syntax error', { code: '42601' }],
    ['statement timeout', { code: '57014' }],
    ['unique violation', { code: '23505' }],
    ['plain error', new Error('boom')],
    ['not an object', 'ECONNREFUSED'],
    ['null', null],
  ])('is false for %s', (_name, error) => {
    expect(isPostgresConnectionError(error)).toBe(false);
  });
});

describe('DATABASE_READ_URL', () => {
  const primary = 'postgres://postgres@127.0.0.1:5432/contacts';
  const replica = 'postgres://postgres@127.0.0.1:5433/contacts';

  function configError(env: NodeJS.ProcessEnv): string {
    try {
      loadConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error('expected loadConfig to throw');
  }

  it('is a PostgreSQL target beside a PostgreSQL DATABASE_URL, and null when unset or blank', () => {
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: replica }).databaseRead).toStrictEqual({
      kind: 'postgres',
      url: replica,
    });
    expect(loadConfig({ DATABASE_URL: primary }).databaseRead).toBeNull();
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: ' ' }).databaseRead).toBeNull();
  });

  it('is refused with a SQLite DATABASE_URL, naming the variable', () => {
    expect(configError({ DATABASE_READ_URL: replica })).toBe(
      'DATABASE_READ_URL needs a PostgreSQL DATABASE_URL: read replicas are for PostgreSQL only',
    );
    expect(configError({ DATABASE_URL: 'file:./x.db', DATABASE_READ_URL: replica })).toMatch(/^DATABASE_READ_URL /);
  });

  it('is refused when it is not a PostgreSQL URL', () => {
    expect(configError({ DATABASE_URL: primary, DATABASE_READ_URL: 'file:./replica.db' })).toBe(
      'DATABASE_READ_URL must be a postgres:// or postgresql:// URL',
    );
  });
});
