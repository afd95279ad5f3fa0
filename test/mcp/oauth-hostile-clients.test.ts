import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_OAUTH_AUTHORIZATIONS_PER_MINUTE, DEFAULT_OAUTH_REGISTRATIONS_PER_MINUTE } from '../../src/config.js';
import { describeEachBackend } from '../support/backends.js';
import { freePort } from '../support/listen.js';
import { startDocumentServer } from '../support/oauth-client.js';
import { openOtherConnection } from '../support/other-connection.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const LOOPBACK_REDIRECT = 'http://127.0.0.1:9/callback';
const CONCURRENCY = 25;

/** Runs `count` calls of `send`, `CONCURRENCY` at a time, and counts the statuses they got. */
async function flood(count: number, send: () => Promise<Response>): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started += 1;
      const response = await send();
      await response.arrayBuffer();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return statuses;
}

/**
 * What a hostile or careless client does to the embedded authorization server, against a server of two workers with
 * its default limits: floods of registrations and authorization requests leave a bounded number of stored rows, and
 * Client ID Metadata Documents are held to the registration rules and fetched once.
 */
describeEachBackend('the authorization server under hostile clients', (db) => {
  let server: ServerProcess;
  let documents: Awaited<ReturnType<typeof startDocumentServer>>;
  const cimd = (path: string, redirect: string) => () => ({
    client_id: `${documents.origin}${path}`,
    client_name: 'Document Agent',
    redirect_uris: [redirect],
    token_endpoint_auth_method: 'none',
  });

  beforeAll(async () => {
    documents = await startDocumentServer(
      new Map([
        ['/agents/good.json', cimd('/agents/good.json', LOOPBACK_REDIRECT)],
        ['/agents/http-redirect.json', cimd('/agents/http-redirect.json', 'http://evil.example/cb')],
      ]),
    );
    const port = await freePort();
    server = await startServerProcess(
      {
        DATABASE_URL: db().databaseUrl,
        OAUTH_ISSUER: `http://127.0.0.1:${port}`,
        OAUTH_CLIENT_METADATA_ALLOW_PRIVATE: 'true',
        NODE_EXTRA_CA_CERTS: documents.certificate,
        WORKERS: '2',
        LOG_LEVEL: 'warn',
      },
      port,
    );
  }, 60_000);
  afterAll(async () => {
    await server?.kill();
    await documents?.close();
  });

  const authorize = (clientId: string, redirect = LOOPBACK_REDIRECT) => {
    const challenge = createHash('sha256').update(randomBytes(32)).digest('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirect,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return fetch(`${server.url}/oauth/authorize?${query}`, { redirect: 'manual' });
  };
  const storedRows = async () => {
    const other = await openOtherConnection(db());
    try {
      const rows = await other.rows<{ kind: string; n: number }>('SELECT kind, COUNT(*) AS n FROM oauth_records GROUP BY kind');
      return Object.fromEntries(rows.map(({ kind, n }) => [kind, Number(n)]));
    } finally {
      await other.close();
    }
  };

  it('a metadata document is fetched over a checked connection and its client reaches the consent page', async () => {
    const response = await authorize(`${documents.origin}/agents/good.json`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toMatch(/^\/oauth\/consent\//);
  });

  it('a metadata document with an http redirect URI off loopback is refused with invalid_redirect_uri, fetched once', async () => {
    const response = await authorize(`${documents.origin}/agents/http-redirect.json`, 'http://evil.example/cb');
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain('invalid_redirect_uri');
    expect(page).toContain('redirect_uris may use http only on loopback');
    expect(documents.fetched.filter((path) => path === '/agents/http-redirect.json')).toHaveLength(1);
  });

  it('a metadata document that cannot be had fails the authorization after one fetch', async () => {
    const response = await authorize(`${documents.origin}/agents/missing.json`);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('invalid_client');
    expect(documents.fetched.filter((path) => path === '/agents/missing.json')).toHaveLength(1);
  });

  it('1,000 registrations and 2,000 authorization requests from one address store a bounded number of rows', async () => {
    const before = await storedRows();
    const registrations = await flood(1000, () =>
      fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Flood', redirect_uris: [LOOPBACK_REDIRECT], token_endpoint_auth_method: 'none' }),
      }),
    );
    const registered = registrations.get(201) ?? 0;
    expect(registered + (registrations.get(429) ?? 0)).toBe(1000);
    // A window may end during the flood, which lets one more window's worth through.
    expect(registered).toBeGreaterThan(0);
    expect(registered).toBeLessThanOrEqual(2 * DEFAULT_OAUTH_REGISTRATIONS_PER_MINUTE);

    const { client_id: clientId } = (await (
      await fetch(`${server.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.7' },
        body: JSON.stringify({ redirect_uris: [LOOPBACK_REDIRECT], token_endpoint_auth_method: 'none' }),
      })
    ).json()) as { client_id?: string };
    // TRUST_PROXY is off: X-Forwarded-For changes nothing, and the address is still over its limit.
    expect(clientId).toBeUndefined();

    const firstClient = await registeredClientId();
    const authorizations = await flood(2000, () => authorize(firstClient));
    const started = authorizations.get(303) ?? 0;
    expect(started + (authorizations.get(429) ?? 0)).toBe(2000);
    expect(started).toBeLessThanOrEqual(2 * DEFAULT_OAUTH_AUTHORIZATIONS_PER_MINUTE);

    const after = await storedRows();
    expect(after.Client ?? 0).toBe((before.Client ?? 0) + registered);
    expect(after.Interaction ?? 0).toBe((before.Interaction ?? 0) + started);
    expect(after.RegistrationAccessToken).toBeUndefined();
    const total = (rows: Record<string, number>) => Object.values(rows).reduce((sum, n) => sum + n, 0);
    expect(total(after) - total(before)).toBe(registered + started);
  }, 120_000);

  /** The id of a client the flood registered, read back from the database the way the provider stores it. */
  async function registeredClientId(): Promise<string> {
    const other = await openOtherConnection(db());
    try {
      const [row] = await other.rows<{ payload: string }>("SELECT payload FROM oauth_records WHERE kind = 'Client'");
      return (JSON.parse(row!.payload) as { client_id: string }).client_id;
    } finally {
      await other.close();
    }
  }
});
