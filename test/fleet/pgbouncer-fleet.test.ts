import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Store, User } from '../../src/store/store.js';
import { createTestDatabase } from '../support/backends.js';
import { basic, PROPFIND_BODY, readMultistatus } from '../support/dav.js';
import { externalToolPresent } from '../support/external-tool.js';
import { freePort } from '../support/listen.js';
import { skipClusterTests, startCluster, startStreamingReplica } from '../support/pg-cluster.js';
import { databaseEntry, pgbouncerInstalled, serverEntry, startPgBouncer, type PgBouncerProcess } from '../support/pgbouncer-process.js';
import { isRunning, killAll, processTree } from '../support/process-tree.js';
import { createKey, createUser, importNumberedContacts } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { createTestWebhook, WebhookReceiver } from '../support/webhook-receiver.js';

const postgresAdminUrl = inject('postgresAdminUrl');
const redisUrl = inject('redisUrl');

const INSTANCES = 3;
const WORKERS = 2;
const EVENTS = 5000;
/** Every key's limit; the rate-limit check spends one key's whole window through the two survivors. */
const RATE_LIMIT = 40;
/** A receiver this slow makes the stream of events last seconds, so the kill lands in its middle. */
const RECEIVER_DELAY_MS = 2;
/** Acknowledged events after which an instance is killed. */
const KILL_AFTER = 1000;
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const METRICS_TOKEN = randomBytes(24).toString('hex');

/** The databases a fleet runs on: direct URLs, which the test routes through its PgBouncer. */
interface FleetDatabases {
  /** The test's own connection to the primary (seeding, direct and not through PgBouncer). */
  store: Store;
  primaryUrl: string;
  replicaUrl?: string;
  /** Waits until reads see every write made so far (a replica has replayed it). */
  settle(): Promise<void>;
  dispose(): Promise<void>;
}

interface Instance {
  server: ServerProcess;
  adminUrl: string;
}

/** What the closing note quotes. */
interface Figures {
  revokeMs?: number;
  atKill?: number;
  deliveries?: number;
  duplicatesByRetry?: number;
  redeliveredAfterKill?: number;
  recoveryMs?: number;
  allDeliveredMs?: number;
  rateLimitAllowed?: number;
  rateLimitSent?: number;
  /** Successful attempts each surviving instance made, from its /metrics. */
  survivorDeliveries?: number[];
}

/** The figures as one line, for the closing note. */
function summary(figures: Figures): string {
  const seconds = (ms?: number) => (ms === undefined ? '?' : `${(ms / 1000).toFixed(1)} s`);
  return [
    `${EVENTS} events, ${figures.deliveries ?? '?'} deliveries`,
    `${figures.duplicatesByRetry ?? '?'} duplicates by retry, ${figures.redeliveredAfterKill ?? '?'} sent again after the kill`,
    `${figures.atKill ?? '?'} acknowledged at the kill`,
    `deliveries resumed ${seconds(figures.recoveryMs)} after it, all in ${seconds(figures.allDeliveredMs)}`,
    `survivors' deliveries ${figures.survivorDeliveries?.join(' + ') ?? '?'}`,
    `revocation refused everywhere after ${figures.revokeMs ?? '?'} ms`,
    `rate limit ${RATE_LIMIT}: ${figures.rateLimitAllowed ?? '?'} of ${figures.rateLimitSent ?? '?'} allowed through the 2 survivors`,
  ].join('; ');
}

const fleetRuns =
  postgresAdminUrl !== null &&
  redisUrl !== null &&
  externalToolPresent('the PgBouncer fleet tests', pgbouncerInstalled, 'apt-get install pgbouncer');

/**
 * Issue 36: three `serve` instances (two workers each) on one PostgreSQL behind one PgBouncer in transaction mode,
 * sharing Redis for the rate limit, as real processes. They answer alike, a revocation reaches all of them within a
 * second, and a SIGKILLed instance loses no webhook event while the two others carry on.
 */
describeFleet('one PostgreSQL', fleetRuns, async () => {
  const { database, dispose } = await createTestDatabase('postgres', postgresAdminUrl);
  return { store: database.store, primaryUrl: database.databaseUrl, settle: async () => undefined, dispose };
});

describeFleet(
  'a primary and a streaming replica for reads',
  fleetRuns && !skipClusterTests('the PgBouncer fleet on a replica', postgresAdminUrl),
  async () => {
    // A primary of its own: a base backup of the shared server would copy whatever else it holds.
    const primary = await startCluster();
    const { database, dispose } = await createTestDatabase('postgres', primary.url());
    const replica = await startStreamingReplica(primary.url());
    const name = new URL(database.databaseUrl).pathname.slice(1);
    return {
      store: database.store,
      primaryUrl: database.databaseUrl,
      replicaUrl: replica.url(name),
      settle: () => replica.catchUp(),
      async dispose() {
        await replica.dispose();
        await dispose();
        await primary.dispose();
      },
    };
  },
);

function describeFleet(title: string, runs: boolean, openDatabases: () => Promise<FleetDatabases>): void {
  describe.runIf(runs)(`a fleet of ${INSTANCES} instances behind PgBouncer (transaction pooling): ${title}`, () => {
    const redisPrefix = `fleet-test:${randomBytes(6).toString('hex')}:`;
    const figures: Figures = {};
    let databases: FleetDatabases;
    let bouncer: PgBouncerProcess;
    let receiver: WebhookReceiver;
    let instances: Instance[] = [];
    let user: User;

    beforeAll(async () => {
      databases = await openDatabases();
      const { primaryUrl, replicaUrl } = databases;
      let env: NodeJS.ProcessEnv;
      if (replicaUrl === undefined) {
        bouncer = await startPgBouncer({ '*': serverEntry(primaryUrl) });
        env = { DATABASE_URL: bouncer.through(primaryUrl) };
      } else {
        // One PgBouncer in front of both servers, a database name for each.
        const name = new URL(primaryUrl).pathname.slice(1);
        bouncer = await startPgBouncer({ [name]: databaseEntry(primaryUrl), [`${name}_replica`]: databaseEntry(replicaUrl) });
        const readUrl = new URL(bouncer.through(primaryUrl));
        readUrl.pathname = `/${name}_replica`;
        env = { DATABASE_URL: bouncer.through(primaryUrl), DATABASE_READ_URL: readUrl.toString() };
      }
      receiver = await WebhookReceiver.start();
      user = await createUser(databases.store);
      await importNumberedContacts(databases.store, user.id, 25, 'Fleet');
      instances = await Promise.all(Array.from({ length: INSTANCES }, () => startInstance(env, redisPrefix)));
    }, 120_000);
    afterAll(async () => {
      for (const { server } of instances) killAll(processTree(server.child.pid!));
      await Promise.all(instances.map(({ server }) => server.exited));
      await receiver?.close();
      await bouncer?.stop();
      await databases?.dispose();
      const redis = new Redis(redisUrl!);
      const keys = await redis.keys(`${redisPrefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      console.log(`fleet figures [${title}]: ${summary(figures)}`);
    });

    it('answers REST pages, the change feed, MCP tool calls and CardDAV alike from every instance', async () => {
      await databases.settle();
      const { key } = await createKey(databases.store, user.id);
      const fromEach = (ask: (origin: string) => Promise<string>) => Promise.all(instances.map(({ server }) => ask(server.url)));
      const expectAlike = (answers: string[]) => {
        for (const answer of answers.slice(1)) expect(answer).toBe(answers[0]);
      };

      for (const offset of [0, 10, 20]) {
        const pages = await fromEach((origin) =>
          text(`${origin}/api/v1/contacts?limit=10&offset=${offset}`, { authorization: `Bearer ${key}` }),
        );
        expectAlike(pages);
        expect(JSON.parse(pages[0]!).data).toHaveLength(offset < 20 ? 10 : 5);
      }

      // A token one instance hands out is read by the others: the walk goes on, whichever answers.
      const firstPages = await fromEach((origin) =>
        text(`${origin}/api/v1/contacts/changes?since=0&limit=10`, { authorization: `Bearer ${key}` }),
      );
      const first = firstPages.map((page) => JSON.parse(page) as { data: unknown[]; next_since: string; has_more: boolean });
      for (const page of first) expect(page).toMatchObject({ data: first[0]!.data, has_more: true });
      const continued = await Promise.all(
        instances.map(({ server }, index) =>
          text(`${server.url}/api/v1/contacts/changes?since=${encodeURIComponent(first[(index + 1) % INSTANCES]!.next_since)}&limit=10`, {
            authorization: `Bearer ${key}`,
          }),
        ),
      );
      const nextData = continued.map((page) => JSON.stringify((JSON.parse(page) as { data: unknown[] }).data));
      expectAlike(nextData);
      expect(JSON.parse(nextData[0]!)).toHaveLength(10);

      const contactId = (JSON.parse(firstPages[0]!) as { data: { id: string }[] }).data[3]!.id;
      for (const call of [
        { name: 'list_contacts', arguments: { limit: 10, offset: 5 } },
        { name: 'search_contacts', arguments: { query: 'Fleet 1', limit: 10 } },
        { name: 'get_contact', arguments: { id: contactId } },
      ]) {
        const answers = await fromEach((origin) =>
          text(`${origin}/mcp`, MCP_HEADERS(key), JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: call })),
        );
        expectAlike(answers);
        expect(JSON.parse(answers[0]!)).not.toHaveProperty('result.isError', true);
      }

      const book = `/dav/addressbooks/${user.id}/contacts/`;
      const dav = (method: string, body: string, depth: string) => (origin: string) =>
        text(`${origin}${book}`, { authorization: basic(key), 'content-type': 'application/xml; charset=utf-8', depth }, body, method);
      const listings = await fromEach(dav('PROPFIND', PROPFIND_BODY('<D:getetag/>', '<D:sync-token/>'), '1'));
      expectAlike(listings);
      expect(readMultistatus(listings[0]!).responses).toHaveLength(26);
      const syncs = await fromEach(dav('REPORT', SYNC_COLLECTION, '0'));
      expectAlike(syncs);
      expect(readMultistatus(syncs[0]!).responses).toHaveLength(25);
    });

    it('refuses a key revoked through one instance’s admin API on every instance within a second', async () => {
      const { id, key } = await createKey(databases.store, user.id);
      const statusesOnce = () =>
        Promise.all(
          instances.flatMap(({ server }) =>
            // Fresh connections, so that both workers of each instance answer (each keeps its own key cache).
            Array.from({ length: WORKERS * 2 }, () => status(`${server.url}/api/v1/contacts?limit=1`, { authorization: `Bearer ${key}` })),
          ),
        );
      expect(new Set(await statusesOnce())).toEqual(new Set([200]));

      const revoked = await fetch(`${instances[1]!.adminUrl}/keys/${id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(revoked.status).toBe(204);
      // From the answer on: the revocation is committed, and each worker's key cache (KEY_CACHE_TTL_MS) is what remains.
      const revokedAt = Date.now();
      let refusedSince: number | null = null;
      // Refused everywhere once, and still refused by every worker for half a second after. A round is timed from when
      // its requests were sent: on a loaded machine a round of fresh connections takes a few hundred ms to come back.
      while (refusedSince === null || Date.now() - refusedSince < 500) {
        const sentAt = Date.now();
        const statuses = await statusesOnce();
        if (statuses.every((code) => code === 401)) refusedSince ??= sentAt;
        else {
          expect(refusedSince).toBeNull();
          expect(sentAt - revokedAt).toBeLessThan(1000);
        }
      }
      figures.revokeMs = refusedSince - revokedAt;
      expect(figures.revokeMs).toBeLessThan(1000);
    });

    it(`delivers ${EVENTS} imported events across a kill -9 of an instance, and the survivors share one rate limit`, async () => {
      const { url, path } = receiver.endpoint([], [200], RECEIVER_DELAY_MS);
      const { record, secret } = await createTestWebhook(databases.store, user.id, url);
      receiver.addSecret(path, secret);
      const ndjson = Array.from({ length: EVENTS }, (_, index) => JSON.stringify({ name: `Streamed ${index + 1}` })).join('\n');
      const imported = await fetch(`${instances[0]!.adminUrl}/users/${user.id}/contacts/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
        body: ndjson,
      });
      expect(imported.status).toBe(200);
      expect(await imported.json()).toMatchObject({ imported: EVENTS, created: EVENTS });

      await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBeGreaterThanOrEqual(KILL_AFTER), {
        timeout: 60_000,
        interval: 20,
      });
      // The instance delivering to the endpoint now: killing it leaves its lease to run out before another takes over.
      const holder = await vi.waitFor(
        async () => {
          const pid = await leaseHolderPid(databases.primaryUrl, record.id);
          const index = instances.findIndex(({ server }) => pid !== null && processTree(server.child.pid!).includes(pid));
          expect(index).toBeGreaterThanOrEqual(0);
          return index;
        },
        { timeout: 10_000, interval: 10 },
      );
      const killed = instances[holder]!;
      const tree = processTree(killed.server.child.pid!);
      killAll(tree);
      await killed.server.exited;
      await vi.waitFor(() => expect(tree.filter(isRunning)).toEqual([]), { timeout: 5_000, interval: 10 });
      const killedAt = Date.now();
      figures.atKill = receiver.acknowledgedIds(path).size;
      expect(figures.atKill).toBeLessThan(EVENTS);
      const survivors = instances.filter((instance) => instance !== killed);

      // The rate limit, while the survivors deliver: one key's window spent through both, in parallel, counted once.
      const { key } = await createKey(databases.store, user.id);
      const statuses: number[] = [];
      for (let round = 0; round < (RATE_LIMIT + 20) / 6; round += 1) {
        statuses.push(
          ...(await Promise.all(
            Array.from({ length: 6 }, (_, index) =>
              status(`${survivors[index % 2]!.server.url}/api/v1/contacts?limit=1`, { authorization: `Bearer ${key}` }),
            ),
          )),
        );
      }
      figures.rateLimitSent = statuses.length;
      figures.rateLimitAllowed = statuses.filter((code) => code === 200).length;
      expect(statuses.filter((code) => code !== 200 && code !== 429)).toEqual([]);
      expect(figures.rateLimitAllowed).toBe(RATE_LIMIT);

      await vi.waitFor(() => expect(receiver.acknowledgedIds(path).size).toBe(EVENTS), { timeout: 90_000, interval: 100 });
      figures.allDeliveredMs = Date.now() - killedAt;
      const deliveries = receiver.deliveries(path);
      figures.deliveries = deliveries.length;
      figures.recoveryMs = deliveries.find((delivery) => delivery.receivedAt > killedAt)!.receivedAt - killedAt;
      expect(receiver.unverified(path)).toBe(0);
      expect(new Set(deliveries.map((delivery) => delivery.event.data.id)).size).toBe(EVENTS);

      // An event comes twice only when an attempt failed and was retried (the deliveries list records the attempt),
      // or when the killed instance had sent it and not recorded it yet.
      const attempts = await databases.store.webhooks.listDeliveries(record.id, 100_000);
      const retried = new Set(attempts.filter((attempt) => attempt.attempt > 1).map((attempt) => attempt.eventId));
      const beforeKill = new Set(deliveries.filter((delivery) => delivery.receivedAt <= killedAt).map((delivery) => delivery.id));
      const times = new Map<string, number>();
      for (const { id } of deliveries) times.set(id, (times.get(id) ?? 0) + 1);
      const repeated = [...times].filter(([, count]) => count > 1).map(([id]) => id);
      const byRetry = repeated.filter((id) => retried.has(id));
      const afterKill = repeated.filter((id) => !retried.has(id) && beforeKill.has(id));
      expect(repeated.filter((id) => !retried.has(id) && !beforeKill.has(id))).toEqual([]);
      figures.duplicatesByRetry = byRetry.length;
      figures.redeliveredAfterKill = afterKill.length;
      // Each survivor's workers deliver, through their own PgBouncer clients: what arrived after the kill is theirs.
      figures.survivorDeliveries = await Promise.all(survivors.map(({ server }) => successfulDeliveries(server.url)));
      expect(figures.survivorDeliveries.reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(EVENTS - figures.atKill);
    }, 180_000);
  });
}

const SYNC_COLLECTION =
  '<?xml version="1.0" encoding="utf-8"?><sync-collection xmlns="DAV:"><sync-token/><sync-level>1</sync-level><prop><getetag/></prop></sync-collection>';

const MCP_HEADERS = (key: string) => ({
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
});

/** `serve` with WORKERS workers, the admin API and metrics on, once every worker listens. */
async function startInstance(database: NodeJS.ProcessEnv, redisPrefix: string): Promise<Instance> {
  const adminPort = await freePort();
  const server = await startServerProcess({
    ...database,
    WORKERS: String(WORKERS),
    REDIS_URL: redisUrl!,
    RATE_LIMIT_REDIS_PREFIX: redisPrefix,
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    // The revocation check polls with a revoked key: its 401s would lock out the test's address.
    AUTH_FAILURES_PER_MINUTE: '0',
    ADMIN_TOKEN,
    ADMIN_PORT: String(adminPort),
    METRICS_TOKEN,
    WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'warn',
  });
  while ((server.output().match(/listening on/g) ?? []).length < WORKERS) await new Promise((resolve) => setTimeout(resolve, 50));
  return { server, adminUrl: `http://127.0.0.1:${adminPort}/admin/v1` };
}

/** The body of a 2xx answer, on a connection of its own. */
async function text(
  url: string,
  headers: Record<string, string>,
  body?: string,
  method = body === undefined ? 'GET' : 'POST',
): Promise<string> {
  const response = await fetch(url, { method, headers: { ...headers, connection: 'close' }, body });
  const answer = await response.text();
  expect(response.status, answer).toBeLessThan(300);
  return answer;
}

/** The status of a request on a connection of its own. */
async function status(url: string, headers: Record<string, string>): Promise<number> {
  const response = await fetch(url, { headers: { ...headers, connection: 'close' } });
  await response.arrayBuffer();
  return response.status;
}

/** The webhook attempts an instance's workers made that succeeded, from its /metrics. */
async function successfulDeliveries(origin: string): Promise<number> {
  const metrics = await text(`${origin}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}` });
  const line = metrics.split('\n').find((entry) => entry.startsWith('contacts_api_webhook_deliveries_total{outcome="success"}'));
  return Number(line?.split(' ')[1] ?? 0);
}

/** The process holding the endpoint's delivery lease (its holder is `host:pid:random`), or null. */
async function leaseHolderPid(databaseUrl: string, webhookId: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ holder: string | null }>(
      'SELECT lease_holder AS holder FROM webhooks WHERE id = $1 AND lease_until > now()',
      [webhookId],
    );
    const holder = rows[0]?.holder;
    return holder ? Number(holder.split(':').at(-2)) : null;
  } finally {
    await client.end();
  }
}
