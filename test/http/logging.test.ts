import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RATE_LIMIT_WINDOW_MS } from '../../src/domain/rate-limit.js';
import { createMemoryCounter } from '../../src/rate-limit/memory-counter.js';
import type { Store } from '../../src/store/store.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { listenOnFreePort } from '../support/listen.js';
import { captureLogs } from '../support/log-capture.js';
import { listContacts } from '../support/requests.js';
import { contactRecord, createKey, createUser } from '../support/seed.js';
import { rawRequest } from '../support/raw-http.js';
import { overrideStore } from '../support/store-override.js';

const CONTACT = { name: 'Zebulon Quintavalle', email: 'zebulon.quintavalle@example.org', phone: '+15550001234' };

/** The store, except that listing `failingOwner`'s contacts throws an error quoting a key and contact data. */
function failingFor(store: Store, failingOwner: () => string, leak: () => string): Store {
  const failFor = (ownerId: string) => {
    if (ownerId !== failingOwner()) return;
    // Like a driver error: the message and its fields quote what the query touched.
    throw Object.assign(new Error(`listing failed for ${leak()}: ${CONTACT.name} <${CONTACT.email}>`), {
      code: '23505',
      detail: `Key (email)=(${CONTACT.email}) already exists.`,
      parameters: [leak(), CONTACT.phone],
    });
  };
  return overrideStore(store, {
    contacts: {
      listPage: async (ownerId, page) => {
        failFor(ownerId);
        return store.contacts.listPage(ownerId, page);
      },
      listPageJson: async (ownerId, page) => {
        failFor(ownerId);
        return store.contacts.listPageJson(ownerId, page);
      },
    },
  });
}

describeEachBackend('logs never carry keys, the Authorization header or contact data', (db) => {
  const logs = captureLogs('trace');
  let app: FastifyInstance;
  let keys: { ok: string; unscoped: string; failing: string; limited: string; unknown: string };
  let failingOwnerId = '';

  beforeAll(async () => {
    const store = db().store;
    const owner = await createUser(store, 'pro', CONTACT.name);
    await store.contacts.importContacts(owner.id, [contactRecord(CONTACT)]);
    const failingOwner = await createUser(store);
    failingOwnerId = failingOwner.id;
    const revokedSoon = await createKey(store, owner.id);
    await store.keys.revoke(revokedSoon.id);
    keys = {
      ok: (await createKey(store, owner.id)).key,
      unscoped: (await createKey(store, owner.id, { scopes: [] })).key,
      failing: (await createKey(store, failingOwner.id)).key,
      limited: (await createKey(store, owner.id)).key,
      unknown: revokedSoon.key,
    };
    app = await buildTestApp(
      failingFor(
        store,
        () => failingOwnerId,
        () => keys.failing,
      ),
      {
        logger: logs.logger,
        config: { rateLimit: { perMinute: 3 } },
        requestCounter: createMemoryCounter({ windowMs: RATE_LIMIT_WINDOW_MS }),
      },
    );
  });
  afterAll(async () => {
    await app?.close();
  });

  it('on success, 400, 401, 403, 404, 405, 429 and a 500 whose error quotes a key and contact data', async () => {
    const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
    const statuses = [
      (await listContacts(app, keys.ok)).statusCode,
      (await listContacts(app, keys.ok, `limit=${keys.ok}`)).statusCode,
      (await listContacts(app, keys.ok, `api_key=${keys.ok}&email=${CONTACT.email}`)).statusCode,
      (await listContacts(app, keys.unknown)).statusCode,
      (await listContacts(app, null, '', { authorization: `Basic ${keys.ok}` })).statusCode,
      (await listContacts(app, keys.unscoped)).statusCode,
      (await get(`/${keys.ok}/contacts`, bearer(keys.ok))).statusCode,
      (
        await app.inject({
          method: 'POST',
          url: '/api/v1/contacts',
          headers: { ...bearer(keys.ok), 'content-type': 'application/json' },
          payload: JSON.stringify({ key: keys.ok, ...CONTACT }),
        })
      ).statusCode,
      (await listContacts(app, keys.limited)).statusCode,
      (await listContacts(app, keys.limited)).statusCode,
      (await listContacts(app, keys.limited)).statusCode,
      (await listContacts(app, keys.limited)).statusCode,
      (await listContacts(app, keys.failing)).statusCode,
    ];
    expect(statuses).toEqual([200, 400, 400, 401, 401, 403, 404, 405, 200, 200, 200, 429, 500]);

    const text = logs.text();
    const lines = logs.lines();
    // The run was logged (so the absence below means something): every request, and the 500 with its cause.
    expect(lines.filter((line) => line.msg === 'request completed')).toHaveLength(statuses.length);
    const failure = lines.find((line) => line.msg === 'request failed');
    expect(failure?.err).toMatchObject({ type: 'Error', code: '23505', stack: expect.stringContaining('at ') });

    for (const key of Object.values(keys)) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(key.slice('cnt_live_'.length, 'cnt_live_'.length + 30));
    }
    for (const value of Object.values(CONTACT)) expect(text).not.toContain(value);
    expect(text).not.toContain(CONTACT.email.split('@')[0]);
    expect(text.toLowerCase()).not.toContain('bearer');
    expect(text.toLowerCase()).not.toContain('authorization');
  });

  it('redacts a key in the path however it is percent-encoded, and never echoes a key-shaped request id', async () => {
    const key = keys.ok;
    const secret = key.slice('cnt_live_'.length);
    const escaped = (text: string) =>
      [...text].map((character) => `%${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');
    const paths = [
      `/api/v1/contacts/cnt%5Flive%5F${secret}`,
      `/api/v1/contacts/${key.slice(0, 20)}${escaped(key[20]!)}${key.slice(21)}`,
      `/api/v1/contacts/${escaped(key)}`,
      `/api/v1/contacts/cnt%255Flive%255F${secret}`,
    ];
    for (const path of paths) expect((await app.inject({ method: 'GET', url: path, headers: bearer(key) })).statusCode).toBe(404);
    const echoed = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': key } });
    expect(echoed.headers['x-request-id']).not.toBe(key);
    const prefixed = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': `trace.${key}` } });
    expect(prefixed.headers['x-request-id']).not.toContain(secret);

    const text = logs.text();
    expect(logs.lines().filter((line) => /\[redacted\]/.test(line.req?.path ?? ''))).not.toHaveLength(0);
    // No stretch of 8 characters of the secret, anywhere in the log.
    for (let start = 0; start + 8 <= secret.length; start += 1) expect(text).not.toContain(secret.slice(start, start + 8));
  });

  it('keeps a key, its secret alone and an OAuth token out of the log, however they are encoded and wherever sent', async () => {
    const { port } = await listenOnFreePort(app);
    const key = keys.ok;
    // An opaque access token as oidc-provider makes them: 43 characters of base64url.
    const secrets = { key, secret: key.slice('cnt_live_'.length), token: randomBytes(32).toString('base64url') };
    const hex = (text: string, lowerCase = false) =>
      [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')[lowerCase ? 'toLowerCase' : 'toUpperCase']()}`).join('');
    const mixedCase = (text: string) =>
      hex(text).replace(/%([0-9A-F])([0-9A-F])/g, (_all, high: string, low: string, at: number) =>
        at % 2 === 0 ? `%${high}${low.toLowerCase()}` : `%${high.toLowerCase()}${low}`,
      );
    const again = (text: string, times: number): string => (times === 0 ? text : again(hex(text), times - 1));
    const encodings = (text: string) => [
      text,
      hex(text),
      hex(text, true),
      mixedCase(text),
      again(text, 2),
      again(text, 5),
      text.replaceAll('_', '%5F'),
      `%FF${hex(text)}`,
      `%C3${hex(text)}%FE`,
      `${hex(text.slice(0, 12))}%FF${hex(text.slice(12))}`,
      `${text.slice(0, 15)}%E3%81${text.slice(15)}`,
      `a+b%20${hex(text)}+c`,
      hex(`%FF${hex(text)}`),
    ];
    const requests: string[] = [];
    for (const secret of Object.values(secrets)) {
      for (const encoded of encodings(secret)) {
        for (const target of [
          `/api/v1/contacts/${encoded}`,
          `/${encoded}/contacts`,
          `/mcp/${encoded}`,
          `/api/v1/contacts?q=${encoded}&k=${encoded}`,
        ]) {
          requests.push(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${keys.unknown}\r\nConnection: close\r\n\r\n`);
        }
        requests.push(
          `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${encoded}\r\nX-Token: ${encoded}\r\nConnection: close\r\n\r\n`,
        );
      }
      requests.push(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${secret.slice(0, 64)}\r\nConnection: close\r\n\r\n`);
    }
    const before = logs.lines().filter((line) => line.msg === 'request completed').length;
    const statuses: number[] = [];
    for (const request of requests) statuses.push((await rawRequest(port, request)).status);

    // Every request was logged (so the absence below means something), but those too long to be read at all (431).
    const incoming = logs.lines().filter((line) => line.msg === 'request completed');
    expect(incoming.length - before).toBe(statuses.filter((status) => status !== 431).length);
    const text = logs.text();
    // The log, and the log percent-decoded as often as anything in it could be: no 8 characters of any secret.
    let decoded = text;
    for (let round = 0; round < 12; round += 1)
      decoded = decoded.replace(/%([0-9A-Fa-f]{2})/g, (_all, byte: string) => String.fromCharCode(parseInt(byte, 16)));
    for (const secret of [secrets.secret, secrets.token]) {
      for (let start = 0; start + 8 <= secret.length; start += 1) {
        expect(text).not.toContain(secret.slice(start, start + 8));
        expect(decoded).not.toContain(secret.slice(start, start + 8));
      }
    }
  });
});
