import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { fingerprintOf, IDEMPOTENCY_IN_PROGRESS_MESSAGE, IDEMPOTENCY_MISMATCH_MESSAGE } from '../../src/operations/idempotency.js';
import { startAdminApp, type AdminAnswer, type AdminTestServer } from '../support/admin-app.js';
import { describeEachBackend } from '../support/backends.js';
import { openOtherConnection } from '../support/other-connection.js';
import { createUser } from '../support/seed.js';

/** A request may take this long here: a request waits up to half of it for another with its key, and a claim is stale after twice it. */
const REQUEST_TIMEOUT_MS = 2_000;

/** Idempotency-Keys on the admin API's POSTs (Stripe's semantics), kept in the database, on both databases. */
describeEachBackend('admin API: Idempotency-Key', (db) => {
  let admin: AdminTestServer;

  beforeAll(async () => {
    admin = await startAdminApp(db().store, { config: { requestTimeoutMs: REQUEST_TIMEOUT_MS } });
  });
  afterAll(async () => {
    await admin?.close();
  });
  afterEach(() => vi.restoreAllMocks());

  const post = (path: string, key: string, body: unknown) => admin.request('POST', path, { body, headers: { 'idempotency-key': key } });
  const keysOf = async (userId: string) => (await db().store.keys.listForOwner(userId)).map((key) => key.id);
  /** How many answers are kept under the Idempotency-Keys that start with the tag. */
  const keptAnswers = async (tag: string) => {
    const other = await openOtherConnection(db());
    try {
      const [row] = await other.rows<{ kept: number }>(
        "SELECT count(*) AS kept FROM idempotency_keys WHERE completed_at IS NOT NULL AND idempotency_key LIKE ? || '%'",
        tag,
      );
      return Number(row!.kept);
    } finally {
      await other.close();
    }
  };
  const outcome = (answer: AdminAnswer) => ({
    status: answer.status,
    body: answer.json,
    replayed: answer.headers.get('idempotent-replayed'),
  });

  it('the same request with the same key gets the first answer again, marked replayed: the same key, never a second', async () => {
    const user = await createUser(db().store);
    const key = randomUUID();
    const first = await post(`/admin/v1/users/${user.id}/keys`, key, { label: 'Zapier' });
    expect(outcome(first)).toEqual({ status: 201, body: expect.objectContaining({ label: 'Zapier' }), replayed: null });
    const again = await post(`/admin/v1/users/${user.id}/keys`, key, { label: 'Zapier' });
    expect(outcome(again)).toEqual({ status: 201, body: first.json, replayed: 'true' });
    expect(await keysOf(user.id)).toEqual([first.json.id]);
  });

  it('a user’s creation and a rotation are replayed too, not refused as conflicts', async () => {
    const body = { email: `idem-${randomUUID()}@example.com`, plan: 'pro' };
    const key = randomUUID();
    const created = await post('/admin/v1/users', key, body);
    expect(outcome(await post('/admin/v1/users', key, body))).toEqual({ status: 201, body: created.json, replayed: 'true' });
    const old = (await admin.request('POST', `/admin/v1/users/${created.json.id}/keys`, { body: {} })).json;
    const rotation = randomUUID();
    const rotated = await post(`/admin/v1/keys/${old.id}/rotate`, rotation, { overlap_seconds: 60 });
    expect(outcome(await post(`/admin/v1/keys/${old.id}/rotate`, rotation, { overlap_seconds: 60 }))).toEqual({
      status: 201,
      body: rotated.json,
      replayed: 'true',
    });
    expect(await keysOf(created.json.id)).toEqual([old.id, rotated.json.id]);
  });

  it('another body, even the same JSON spelled otherwise, is a 422; the same key on another path is its own', async () => {
    const user = await createUser(db().store);
    const key = randomUUID();
    const path = `/admin/v1/users/${user.id}/keys`;
    const first = await post(path, key, { label: 'one' });
    const other = await post(path, key, { label: 'two' });
    expect(outcome(other)).toEqual({ status: 422, body: { error: IDEMPOTENCY_MISMATCH_MESSAGE }, replayed: null });
    const respelled = await admin.request('POST', path, {
      raw: '{ "label": "one" }',
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
    });
    expect(respelled.status).toBe(422);
    const anotherUser = await createUser(db().store);
    const elsewhere = await post(`/admin/v1/users/${anotherUser.id}/keys`, key, { label: 'one' });
    expect(elsewhere.status).toBe(201);
    expect(await keysOf(user.id)).toEqual([first.json.id]);
  });

  it('an id in another case, or percent-encoded, names the same operation: the same key replays the first answer, and makes nothing more', async () => {
    const user = await createUser(db().store);
    const key = randomUUID();
    const first = await post(`/admin/v1/users/${user.id}/keys`, key, { label: 'Zapier' });
    const upper = await post(`/admin/v1/users/${user.id.toUpperCase()}/keys`, key, { label: 'Zapier' });
    expect(outcome(upper)).toEqual({ status: 201, body: first.json, replayed: 'true' });
    const encoded = `%${user.id.charCodeAt(0).toString(16)}${user.id.slice(1)}`;
    expect(outcome(await post(`/admin/v1/users/${encoded}/keys`, key, { label: 'Zapier' }))).toEqual(outcome(upper));
    expect(outcome(await post(`/admin/v1/users/${user.id}/keys`, key, { label: 'other' }))).toEqual({
      status: 422,
      body: { error: IDEMPOTENCY_MISMATCH_MESSAGE },
      replayed: null,
    });
    const rotation = randomUUID();
    const rotated = await post(`/admin/v1/keys/${first.json.id.toUpperCase()}/rotate`, rotation, {});
    expect(outcome(await post(`/admin/v1/keys/${first.json.id}/rotate`, rotation, {}))).toEqual({
      status: 201,
      body: rotated.json,
      replayed: 'true',
    });
    expect(await keysOf(user.id)).toEqual([first.json.id, rotated.json.id]);
  });

  it('deleting a user deletes the answers kept for them: a retry after it runs anew and finds no user, never the secret', async () => {
    const tag = randomUUID();
    const user = (await post('/admin/v1/users', `${tag} signup`, { email: `${tag}@example.com`, plan: 'pro' })).json;
    const calls: [path: string, body: unknown][] = [
      [`/admin/v1/users/${user.id}/keys`, { label: 'Zapier' }],
      [`/admin/v1/users/${user.id}/webhooks`, { url: 'https://hooks.example.com/gone' }],
    ];
    const answers = [];
    for (const [path, body] of calls) answers.push(await post(path, `${tag} ${path}`, body));
    calls.push([`/admin/v1/keys/${answers[0]!.json.id}/rotate`, {}], [`/admin/v1/webhooks/${answers[1]!.json.id}/rotate-secret`, {}]);
    for (const [path, body] of calls.slice(2)) answers.push(await post(path, `${tag} ${path}`, body));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 200]);
    expect(await keptAnswers(tag)).toBe(5);

    expect((await admin.request('DELETE', `/admin/v1/users/${user.id}`)).status).toBe(204);
    expect(await keptAnswers(tag)).toBe(0);
    for (const [path, body] of calls) {
      const retried = await post(path, `${tag} ${path}`, body);
      expect({ path, status: retried.status, replayed: retried.headers.get('idempotent-replayed') }).toEqual({
        path,
        status: 404,
        replayed: null,
      });
    }
  });

  it('a 4xx answer is kept and replayed; a 5xx is not: the retry runs', async () => {
    const unknown = randomUUID();
    const key = randomUUID();
    const missing = await post(`/admin/v1/users/${unknown}/keys`, key, {});
    expect(outcome(missing)).toEqual({ status: 404, body: { error: `No user with id "${unknown}"` }, replayed: null });
    expect(outcome(await post(`/admin/v1/users/${unknown}/keys`, key, {}))).toEqual({ status: 404, body: missing.json, replayed: 'true' });

    const user = await createUser(db().store);
    vi.spyOn(db().store.keys, 'create').mockRejectedValueOnce(new Error('connection reset'));
    const failed = await post(`/admin/v1/users/${user.id}/keys`, key, {});
    expect(outcome(failed)).toEqual({ status: 500, body: { error: 'Internal server error' }, replayed: null });
    const retried = await post(`/admin/v1/users/${user.id}/keys`, key, {});
    expect(outcome(retried)).toEqual({ status: 201, body: expect.objectContaining({ id: expect.any(String) }), replayed: null });
    expect(await keysOf(user.id)).toEqual([retried.json.id]);
  });

  it('400 naming the header for a key that is empty, longer than 255 characters or not printable ASCII', async () => {
    const user = await createUser(db().store);
    for (const key of ['', 'k'.repeat(256), 'clé']) {
      const answer = await admin.request('POST', `/admin/v1/users/${user.id}/keys`, { body: {}, headers: { 'idempotency-key': key } });
      expect({ key, status: answer.status, body: answer.json }).toEqual({
        key,
        status: 400,
        body: { error: 'Idempotency-Key must be 1 to 255 printable ASCII characters' },
      });
    }
    expect((await post(`/admin/v1/users/${user.id}/keys`, 'k'.repeat(255), {})).status).toBe(201);
    expect(await keysOf(user.id)).toHaveLength(1);
  });

  it('20 parallel requests with one key create exactly one key; every answer is that key, or 409 while it was made', async () => {
    const user = await createUser(db().store);
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(`/admin/v1/users/${user.id}/keys`, key, { label: 'once' })));
    expect(await keysOf(user.id)).toHaveLength(1);
    const ran = answers.filter((answer) => answer.status === 201 && answer.headers.get('idempotent-replayed') === null);
    expect(ran).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 409) expect(answer.json).toEqual({ error: IDEMPOTENCY_IN_PROGRESS_MESSAGE });
      else expect({ status: answer.status, body: answer.json }).toEqual({ status: 201, body: ran[0]!.json });
    }
  });

  it('keeps answers encrypted: the stored row holds neither the key nor its secret', async () => {
    const user = await createUser(db().store);
    const key = randomUUID();
    const { json: created } = await post(`/admin/v1/users/${user.id}/keys`, key, {});
    const other = await openOtherConnection(db());
    try {
      const [row] = await other.rows<{ status: number; body: string }>(
        'SELECT status, body FROM idempotency_keys WHERE idempotency_key = ?',
        key,
      );
      expect(row!.status).toBe(201);
      expect(row!.body).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
      expect(row!.body).not.toContain(created.key.slice(9, 39));
      expect(row!.body).not.toContain(created.id);
    } finally {
      await other.close();
    }
  });

  it('the same request waits for one running, then gets 409; a claim left by a dead worker is taken over once stale', async () => {
    const user = await createUser(db().store);
    const path = `/admin/v1/users/${user.id}/keys`;
    const body = JSON.stringify({ label: 'crashed' });
    const fingerprint = fingerprintOf({ method: 'POST', path, contentType: 'application/json' }, Buffer.from(body));
    const [running, abandoned] = [randomUUID(), randomUUID()];
    const scope = `POST ${path}`;
    await db().store.idempotency.claim({ scope, key: running }, fingerprint, new Date().toISOString());
    await db().store.idempotency.claim(
      { scope, key: abandoned },
      fingerprint,
      new Date(Date.now() - 2 * REQUEST_TIMEOUT_MS - 1_000).toISOString(),
    );

    const started = Date.now();
    const waiting = await post(path, running, { label: 'crashed' });
    expect(outcome(waiting)).toEqual({ status: 409, body: { error: IDEMPOTENCY_IN_PROGRESS_MESSAGE }, replayed: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS / 2 - 50);
    const takenOver = await post(path, abandoned, { label: 'crashed' });
    expect(outcome(takenOver)).toEqual({ status: 201, body: expect.objectContaining({ label: 'crashed' }), replayed: null });
  });

  it('an import’s claim is not stale while the import may still run: its retry gets 409, and nothing is imported twice', async () => {
    const user = await createUser(db().store);
    const path = `/admin/v1/users/${user.id}/contacts/import`;
    const body = '{"name":"Ada"}\n';
    const contentType = 'application/x-ndjson';
    const fingerprint = fingerprintOf({ method: 'POST', path, contentType }, Buffer.from(body));
    const key = randomUUID();
    // Older than a request's stale bound, well within an import's (twice its own time bound, a minute at least).
    await db().store.idempotency.claim(
      { scope: `POST ${path}`, key },
      fingerprint,
      new Date(Date.now() - 2 * REQUEST_TIMEOUT_MS - 1_000).toISOString(),
    );
    const retry = await admin.request('POST', path, { raw: body, headers: { 'content-type': contentType, 'idempotency-key': key } });
    expect(outcome(retry)).toEqual({ status: 409, body: { error: IDEMPOTENCY_IN_PROGRESS_MESSAGE }, replayed: null });
    expect((await db().store.contacts.listPage(user.id, { limit: 1, offset: 0 })).total).toBe(0);
  });
});
