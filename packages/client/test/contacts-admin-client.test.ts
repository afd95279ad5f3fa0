import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  ConflictError,
  ContactsAdminClient,
  ContactsApiError,
  IdempotencyKeyReusedError,
  NotFoundError,
  ServerError,
  UnexpectedResponseError,
} from '../src/index.js';

const USER = {
  id: '0190f3a4-0000-7000-8000-000000000001',
  email: 'ada@example.com',
  name: null,
  plan: 'pro',
  created_at: '2026-01-01T00:00:00.000Z',
};

/** A fetch that answers from a script, one reply per call, recording each request. */
function scriptedFetch(...replies: Response[]) {
  const requests: Request[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    requests.push(new Request(input, init));
    const reply = replies.shift();
    if (reply === undefined) throw new Error('no scripted reply left');
    return reply;
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

const clientWith = (fetch: typeof globalThis.fetch) =>
  new ContactsAdminClient({ baseUrl: 'http://admin.test/prefix', adminToken: 'admin-token', fetch, sleep: async () => undefined });

describe('ContactsAdminClient requests', () => {
  it('sends each POST with an Idempotency-Key, its own when none is given, the same on every retry', async () => {
    const { fetch, requests } = scriptedFetch(json(503, { error: 'busy' }), json(201, USER), json(201, USER));
    const admin = clientWith(fetch);
    expect(await admin.createUser({ email: 'ada@example.com', plan: 'pro' })).toEqual(USER);
    await admin.createUser({ email: 'ada@example.com', plan: 'pro' }, { idempotencyKey: 'signup-42' });
    const keys = requests.map((request) => request.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys).toEqual([keys[0], keys[0], 'signup-42']);
    expect(requests[0]!.url).toBe('http://admin.test/prefix/admin/v1/users');
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer admin-token');
    expect(requests[0]!.headers.get('content-type')).toBe('application/json');
    expect(await requests[0]!.text()).toBe('{"email":"ada@example.com","plan":"pro"}');
  });

  it('sends GET, PATCH and DELETE without an Idempotency-Key, ids as one path segment each', async () => {
    const { fetch, requests } = scriptedFetch(json(200, USER), json(200, USER), new Response(null, { status: 204 }));
    const admin = clientWith(fetch);
    await admin.getUser('a/b');
    await admin.updateUser(USER.id, { plan: 'free' });
    await admin.deleteContact(USER.id, 'c d');
    expect(requests.map((request) => [request.method, request.url, request.headers.get('idempotency-key')])).toEqual([
      ['GET', 'http://admin.test/prefix/admin/v1/users/a%2Fb', null],
      ['PATCH', `http://admin.test/prefix/admin/v1/users/${USER.id}`, null],
      ['DELETE', `http://admin.test/prefix/admin/v1/users/${USER.id}/contacts/c%20d`, null],
    ]);
  });

  it('sends the webhook calls to their paths: limit as a query, a replay’s Date as ISO, a rotation with an Idempotency-Key', async () => {
    const webhook = { id: 'w/1', url: 'https://hooks.example.com/', status: 'enabled' };
    const { fetch, requests } = scriptedFetch(json(200, { data: [] }), json(202, webhook), json(200, { secret: 'whsec_x' }));
    const admin = clientWith(fetch);
    expect(await admin.listWebhookDeliveries('w/1', { limit: 20 })).toEqual([]);
    expect(await admin.replayWebhook('w/1', new Date('2026-05-01T09:30:00Z'))).toEqual(webhook);
    expect(await admin.rotateWebhookSecret('w/1')).toEqual({ secret: 'whsec_x' });
    expect(requests.map((request) => [request.method, request.url, request.headers.get('idempotency-key') !== null])).toEqual([
      ['GET', 'http://admin.test/prefix/admin/v1/webhooks/w%2F1/deliveries?limit=20', false],
      ['POST', 'http://admin.test/prefix/admin/v1/webhooks/w%2F1/replay', true],
      ['POST', 'http://admin.test/prefix/admin/v1/webhooks/w%2F1/rotate-secret', true],
    ]);
    expect(await requests[1]!.text()).toBe('{"since":"2026-05-01T09:30:00.000Z"}');
  });

  it('imports the body as it is, with its content type and match_email', async () => {
    const summary = { imported: 1, created: 1, updated: 0, unchanged: 0 };
    const { fetch, requests } = scriptedFetch(json(200, summary));
    await clientWith(fetch).importContacts(USER.id, 'name\nAda\n', { contentType: 'text/csv', matchEmail: true });
    expect(requests[0]!.url).toBe(`http://admin.test/prefix/admin/v1/users/${USER.id}/contacts/import?match_email=true`);
    expect(requests[0]!.headers.get('content-type')).toBe('text/csv');
    expect(await requests[0]!.text()).toBe('name\nAda\n');
  });

  it('sends match comma-separated, and an empty list as none', async () => {
    const summary = { imported: 1, created: 1, updated: 0, unchanged: 0 };
    const { fetch, requests } = scriptedFetch(json(200, summary), json(200, summary));
    const client = clientWith(fetch);
    await client.importContacts(USER.id, 'name\nAda\n', { contentType: 'text/csv', match: ['email', 'linkedin_url'] });
    await client.importContacts(USER.id, 'name\nAda\n', { contentType: 'text/csv', match: [] });
    expect(requests.map((request) => new URL(request.url).search)).toEqual(['?match=email%2Clinkedin_url', '?match=none']);
  });
});

describe("ContactsAdminClient errors: the admin API's statuses have classes of their own", () => {
  const cases: [number, new (...args: never[]) => ContactsApiError][] = [
    [400, BadRequestError],
    [404, NotFoundError],
    [409, ConflictError],
    [413, BadRequestError],
    [415, BadRequestError],
    [422, IdempotencyKeyReusedError],
    [500, ServerError],
    [418, UnexpectedResponseError],
  ];
  for (const [status, type] of cases) {
    it(`${status} → ${type.name}`, async () => {
      const replies = Array.from({ length: 5 }, () => json(status, { error: 'refused' }));
      const error = await clientWith(scriptedFetch(...replies).fetch)
        .getUser(USER.id)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(type);
      expect(error).toMatchObject({ status, serverMessage: 'refused', message: `refused (HTTP ${status})` });
    });
  }

  it('a 200 that is not a user is an UnexpectedResponseError', async () => {
    const error = await clientWith(scriptedFetch(json(200, { users: [] })).fetch)
      .getUser(USER.id)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toBe(
      'the response to GET /prefix/admin/v1/users/0190f3a4-0000-7000-8000-000000000001 is not a user (HTTP 200)',
    );
  });
});
