import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importTimeoutMs, UNSUPPORTED_IMPORT_TYPE_MESSAGE } from '../../src/admin/routes/contacts.js';
import { bodyTooLargeMessage } from '../../src/web/body-size.js';
import type { User } from '../../src/store/store.js';
import { startAdminApp, TEST_ADMIN_TOKEN, type AdminAnswer, type AdminTestServer } from '../support/admin-app.js';
import { bearer, buildTestApp } from '../support/app.js';
import { describeEachBackend } from '../support/backends.js';
import { cliJson, writeTempFile } from '../support/cli.js';
import { BODY_CHUNK, ndjsonContacts } from '../support/contact-bodies.js';
import { openApiResponseChecker } from '../support/openapi-responses.js';
import { createKey, createUser } from '../support/seed.js';

const MIB = 1024 * 1024;
const BODY_LIMIT_MB = 6;

const JSON_BODY = JSON.stringify([
  { name: 'Ada Lovelace', email: 'ada@example.com', tags: ['math', 'history'] },
  {},
  { name: 'Ada again', email: 'ADA@example.com' },
]);
const NDJSON_BODY = '{"name": "Grace Hopper", "email": "grace@navy.example"}\n\n{"name": "Alan Turing"}\n';
const VCARD_BODY = [
  'BEGIN:VCARD',
  'VERSION:3.0',
  'FN:Ada Lovelace',
  'EMAIL:ada@example.com',
  'PHOTO;VALUE=uri:https://example.com/ada.jpg',
  'END:VCARD',
  '',
].join('\r\n');

/** A body in each media type, and the file name `contacts import` reads it from. */
const BODIES: { name: string; type: string; text: string }[] = [
  { name: 'contacts.json', type: 'application/json', text: JSON_BODY },
  { name: 'contacts.ndjson', type: 'application/x-ndjson', text: NDJSON_BODY },
  { name: 'contacts.vcf', type: 'text/vcard', text: VCARD_BODY },
  ...['google-contacts.csv', 'google-contacts-legacy.csv', 'linkedin-connections.csv', 'outlook-contacts-semicolon.csv'].map((name) => ({
    name,
    type: 'text/csv; charset=utf-8',
    text: readFileSync(`test/fixtures/import/${name}`, 'utf8'),
  })),
];

/** The contacts endpoints of the admin API, over a real socket, every answer checked against the admin document. */
describeEachBackend('admin API: contacts', (db) => {
  let admin: AdminTestServer;
  let publicApp: FastifyInstance;

  beforeAll(async () => {
    admin = await startAdminApp(db().store, { config: { admin: { token: TEST_ADMIN_TOKEN, bodyLimitMb: BODY_LIMIT_MB } } });
    publicApp = await buildTestApp(db().store);
  });
  afterAll(async () => {
    await admin?.close();
    await publicApp?.close();
  });

  const importPath = (userId: string, query = '') => `/admin/v1/users/${userId}/contacts/import${query}`;
  const importBody = (userId: string, type: string, raw: string | Uint8Array, headers: Record<string, string> = {}) =>
    admin.request('POST', importPath(userId), { raw, headers: { 'content-type': type, ...headers } });
  const importOperation = () =>
    admin.document.paths['/admin/v1/users/{id}/contacts/import']!.post as unknown as { requestBody: { content: object } };
  const total = async (userId: string) => (await db().store.contacts.listPage(userId, { limit: 1, offset: 0 })).total;
  const contactIds = async (userId: string) =>
    (await db().store.contacts.listPage(userId, { limit: 100, offset: 0 })).contacts.map((contact) => contact.id);

  /**
   * Sends the chunks, without Content-Length, over a connection of their own, and resolves as soon as the server
   * answers, even before every chunk is sent; `sent` counts the bytes sent until then.
   */
  async function streamed(path: string, type: string, chunks: Iterable<Buffer>): Promise<AdminAnswer & { sent: number }> {
    const pending = chunks[Symbol.iterator]();
    return new Promise((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const request = httpRequest(`${admin.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': type, 'transfer-encoding': 'chunked' },
      });
      request.on('response', (response) => {
        answered = true;
        const received: Buffer[] = [];
        response.on('data', (chunk: Buffer) => received.push(chunk));
        response.on('end', () => {
          const body = Buffer.concat(received);
          const headers = Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)]));
          const problems = openApiResponseChecker(admin.document)({
            method: 'POST',
            url: path,
            status: response.statusCode!,
            headers,
            body,
          });
          if (problems.length > 0) reject(new Error(problems.join('\n')));
          const text = body.toString('utf8');
          // The rest of the body is not sent: the server discards what is in flight.
          request.destroy();
          resolve({ status: response.statusCode!, headers: new Headers(headers), text, json: JSON.parse(text), sent });
        });
      });
      request.on('error', reject);
      const send = (): void => {
        for (let next = pending.next(); !next.done; next = pending.next()) {
          if (answered || request.destroyed) return;
          sent += next.value.length;
          if (!request.write(next.value)) return void request.once('drain', send);
        }
        request.end();
      };
      send();
    });
  }

  /** The bytes in chunks of BODY_CHUNK. */
  function* chunksOf(bytes: Buffer): Generator<Buffer> {
    for (let at = 0; at < bytes.length; at += BODY_CHUNK) yield bytes.subarray(at, at + BODY_CHUNK);
  }

  describe('POST /users/{id}/contacts/import', () => {
    it('imports a body in each format: 200 with the summary `contacts import --json` prints for the same file', async () => {
      for (const { name, type, text } of BODIES) {
        const [overHttp, byCli] = [await createUser(db().store), await createUser(db().store)];
        const answer = await importBody(overHttp.id, type, text);
        const printed = await cliJson(db().databaseUrl, 'contacts', 'import', '--user', byCli.id, writeTempFile(name, text));
        expect({ name, status: answer.status, body: answer.json }).toEqual({ name, status: 200, body: printed });
        expect(answer.json.imported, name).toBeGreaterThan(0);
        expect(await total(overHttp.id)).toBe(await total(byCli.id));
      }
    });

    it('reads a 5 MB NDJSON body as it arrives, in chunks without Content-Length, and imports it in one transaction', async () => {
      const user = await createUser(db().store);
      const bytes = ndjsonContacts(20_000);
      expect(bytes.length).toBeGreaterThan(5_000_000);
      const answer = await streamed(importPath(user.id), 'application/x-ndjson', chunksOf(bytes));
      expect({ status: answer.status, created: answer.json.created }).toEqual({ status: 200, created: 20_000 });
      expect(await total(user.id)).toBe(20_000);
    });

    it('takes its own time bound, not REQUEST_TIMEOUT_MS: a body that takes longer to read is read to its end', async () => {
      const slow = await startAdminApp(db().store, {
        config: { requestTimeoutMs: 1_500, admin: { token: TEST_ADMIN_TOKEN, bodyLimitMb: 16 } },
      });
      try {
        const user = await createUser(db().store);
        // 60,000 rows take seconds to read and write; the last one is refused, so nothing is imported.
        const rows = Array.from({ length: 60_000 }, (_, i) => `Contact ${i},c${i}@example.com,"Acme, Inc."`);
        const csv = `name,email,company\n${rows.join('\n')}\nLast,"unclosed\n`;
        const startedAt = Date.now();
        const answer = await slow.request('POST', importPath(user.id), { raw: csv, headers: { 'content-type': 'text/csv' } });
        expect({ status: answer.status, body: answer.json }).toEqual({
          status: 400,
          body: { error: 'line 60002: a quoted cell is never closed' },
        });
        expect(Date.now() - startedAt).toBeGreaterThan(1_500);
        expect(await total(user.id)).toBe(0);
        expect(importTimeoutMs(16 * MIB)).toBe(64_000);
      } finally {
        await slow.close();
      }
    });

    it('413 past ADMIN_BODY_LIMIT_MB, nothing imported: unread when declared, and reading stops at the limit when streamed', async () => {
      const user = await createUser(db().store);
      const limit = BODY_LIMIT_MB * MIB;
      const tooLarge = { status: 413, body: { error: bodyTooLargeMessage(limit) } };

      const declared = await importBody(user.id, 'application/x-ndjson', ndjsonContacts(30_000));
      expect({ status: declared.status, body: declared.json }).toEqual(tooLarge);
      expect(declared.headers.get('connection')).toBe('close');

      // 64 MB of whole lines, more than any socket buffers hold: the answer comes while it is still being sent.
      const lines = ndjsonContacts(240);
      function* sixtyFourMegabytes() {
        for (let sent = 0; sent < 64 * MIB; sent += lines.length) yield lines;
      }
      const sentInChunks = await streamed(importPath(user.id), 'application/x-ndjson', sixtyFourMegabytes());
      expect({ status: sentInChunks.status, body: sentInChunks.json }).toEqual(tooLarge);
      expect(sentInChunks.sent).toBeLessThan(32 * MIB);
      expect(await total(user.id)).toBe(0);
    });

    it('reads each format under the other media types tools send for it (text/x-vcard, text/directory, application/ndjson…)', async () => {
      const aliases = {
        'application/x-ndjson': [
          'application/ndjson',
          'application/jsonl',
          'application/x-jsonl',
          'application/jsonlines',
          'application/x-jsonlines',
        ],
        'text/csv': ['application/csv', 'text/comma-separated-values', 'text/x-csv', 'application/x-csv'],
        'text/vcard': ['text/x-vcard', 'text/directory'],
      };
      const csv = 'name,email\nAda Lovelace,ada@example.com\n';
      const bodies: Record<string, string> = { 'application/x-ndjson': NDJSON_BODY, 'text/csv': csv, 'text/vcard': VCARD_BODY };
      for (const [name, types] of Object.entries(aliases)) {
        const expected = (await importBody((await createUser(db().store)).id, name, bodies[name]!)).json;
        for (const type of types) {
          const user = await createUser(db().store);
          const answer = await importBody(user.id, `${type}; charset=utf-8`, bodies[name]!);
          expect({ type, status: answer.status, body: answer.json }).toEqual({ type, status: 200, body: expected });
          expect(await total(user.id)).toBe(expected.imported);
        }
        expect(importOperation().requestBody.content).toEqual(
          expect.objectContaining(Object.fromEntries(types.map((type) => [type, expect.anything()]))),
        );
      }
    });

    it('415 for another content type or none, naming the ones it reads; the body is not read', async () => {
      const user = await createUser(db().store);
      expect(UNSUPPORTED_IMPORT_TYPE_MESSAGE).toBe(
        'Content-Type must be application/json, application/x-ndjson, application/ndjson, application/jsonl, application/x-jsonl, ' +
          'application/jsonlines, application/x-jsonlines, text/csv, application/csv, text/comma-separated-values, text/x-csv, ' +
          'application/x-csv, text/vcard, text/x-vcard or text/directory',
      );
      const others = ['text/plain', 'application/xml', 'application/vcard+json', 'text/calendar'];
      for (const headers of [...others.map((type) => ({ 'content-type': type })), {}] as Record<string, string>[]) {
        const answer = await admin.request('POST', importPath(user.id), { raw: NDJSON_BODY, headers });
        expect({ headers, status: answer.status, body: answer.json }).toEqual({
          headers,
          status: 415,
          body: { error: UNSUPPORTED_IMPORT_TYPE_MESSAGE },
        });
      }
      expect(await total(user.id)).toBe(0);
    });

    it('400 naming the record, the line or the problem, as the CLI does; nothing is imported', async () => {
      const user = await createUser(db().store);
      const bad: [string, string | Uint8Array, string][] = [
        ['application/x-ndjson', '{"name": "Ada"}\n\n{"name": "Grace", "email": 42}\n', 'line 3: field "email" must be a string or null'],
        ['application/json', '[{"name": "Ada"}, {"name": "Grace", "foo": 1}]', 'record 2: unknown field "foo"'],
        ['application/json', '{"name": "Ada"}', 'expected a JSON array of contact objects'],
        ['text/csv', 'name,e-mail\nAda,ada@example.com\n', 'line 1: unknown column "e-mail"'],
        ['text/vcard', 'BEGIN:VCARD\nFN:Ada\n', 'card 1 (line 1): no END:VCARD before the end of the file'],
        ['text/csv', Buffer.from('name\nM\u00fcller\n', 'latin1'), 'cannot read the body: it is not UTF-8 text'],
      ];
      for (const [type, body, error] of bad) {
        const answer = await importBody(user.id, type, body);
        expect({ type, status: answer.status, error: answer.json.error }).toEqual({
          type,
          status: 400,
          error: expect.stringContaining(error),
        });
      }
      expect(await total(user.id)).toBe(0);
    });

    it('404 for an unknown user; 400 naming a wrong match_email', async () => {
      const unknown = randomUUID();
      const missing = await importBody(unknown, 'application/x-ndjson', NDJSON_BODY);
      expect({ status: missing.status, body: missing.json }).toEqual({ status: 404, body: { error: `No user with id "${unknown}"` } });
      const user = await createUser(db().store);
      const wrong = await admin.request('POST', importPath(user.id, '?match_email=yes'), {
        raw: NDJSON_BODY,
        headers: { 'content-type': 'application/x-ndjson' },
      });
      expect({ status: wrong.status, body: wrong.json }).toEqual({
        status: 400,
        body: { error: 'match_email must be one of: true, false' },
      });
    });

    it('match_email=true: a record without id updates the contact with the same email', async () => {
      const user = await createUser(db().store);
      await importBody(user.id, 'application/x-ndjson', '{"name": "Ada", "email": "ada@example.com"}\n');
      const answer = await admin.request('POST', importPath(user.id, '?match_email=true'), {
        raw: '{"name": "Ada Lovelace", "email": "ADA@example.com"}\n',
        headers: { 'content-type': 'application/x-ndjson' },
      });
      expect(answer.json).toMatchObject({ created: 0, updated: 1, matched_by_email: 1 });
      expect((await db().store.contacts.listPage(user.id, { limit: 10, offset: 0 })).contacts.map((c) => c.name)).toEqual(['Ada Lovelace']);
    });

    it('a LinkedIn Connections.csv sent twice: the second time creates nothing, each connection found by its LinkedIn URL', async () => {
      const user = await createUser(db().store);
      const connections = readFileSync('test/fixtures/import/linkedin-connections.csv', 'utf8');
      const first = await importBody(user.id, 'text/csv', connections);
      expect(first.json).toMatchObject({ created: 2, matched_by_linkedin_url: 0 });
      const again = await importBody(
        user.id,
        'text/csv',
        connections.replace('https://www.', 'http://').replace('ada-lovelace', 'Ada-Lovelace/?trk=x'),
      );
      expect({ status: again.status, body: again.json }).toMatchObject({
        status: 200,
        body: { created: 0, updated: 1, unchanged: 1, without_id: 2, matched_by_email: 0, matched_by_linkedin_url: 2 },
      });
      const { contacts } = await db().store.contacts.listPage(user.id, { limit: 10, offset: 0 });
      expect(contacts.map((c) => [c.name, c.source])).toEqual([
        ['Ada Lovelace', 'linkedin'],
        ['Grace Hopper', 'linkedin'],
      ]);
    });

    it('match names the fields a record without id is matched on (match_email=true: email); 400 for another, nothing imported', async () => {
      const user = await createUser(db().store);
      const send = (query: string, body: string) =>
        admin.request('POST', importPath(user.id, query), { raw: body, headers: { 'content-type': 'application/x-ndjson' } });
      await send('', '{"name": "Ada", "email": "ada@example.com", "linkedin_url": "https://www.linkedin.com/in/ada-l"}\n');
      const byUrl = '{"name": "Ada L", "linkedin_url": "linkedin.com/in/ADA-L/"}\n';
      const byEmail = '{"name": "Ada Lovelace", "email": "ADA@example.com"}\n';
      // Any other body matches on nothing unless told.
      expect((await send('', byUrl)).json).toMatchObject({ created: 1, matched_by_linkedin_url: 0 });
      expect((await send('?match=linkedin_url', byUrl)).json).toMatchObject({ created: 0, matched_by_linkedin_url: 1 });
      expect((await send('?match=email,linkedin_url', byEmail)).json).toMatchObject({ created: 0, matched_by_email: 1 });
      expect((await send('?match_email=true', byEmail)).json).toMatchObject({ created: 0, matched_by_email: 1 });
      expect((await send('?match=none', byEmail)).json).toMatchObject({ created: 1, matched_by_email: 0 });
      const before = await total(user.id);
      for (const [query, error] of [
        ['?match=phone', 'match must be email, linkedin_url, email,linkedin_url or none; got "phone"'],
        ['?match=email&match_email=true', 'give match or match_email, not both'],
        ['?match=email&match=linkedin_url', 'match must be a string'],
      ]) {
        const refused = await send(query!, byEmail);
        expect({ query, status: refused.status, body: refused.json }).toEqual({ query, status: 400, body: { error } });
      }
      expect(await total(user.id)).toBe(before);
    });

    it('a contact created from an export gets the product as its source; from a body of our fields, none', async () => {
      const sources: Record<string, (string | null)[]> = {};
      for (const { name, type, text } of BODIES) {
        const user = await createUser(db().store);
        expect((await importBody(user.id, type, text)).status).toBe(200);
        const { contacts } = await db().store.contacts.listPage(user.id, { limit: 10, offset: 0 });
        sources[name] = [...new Set(contacts.map((contact) => contact.source))];
      }
      expect(sources).toEqual({
        'contacts.json': [null],
        'contacts.ndjson': [null],
        'contacts.vcf': ['vcard'],
        'google-contacts.csv': ['google'],
        'google-contacts-legacy.csv': ['google'],
        'linkedin-connections.csv': ['linkedin'],
        'outlook-contacts-semicolon.csv': ['outlook'],
      });
    });

    it('with an Idempotency-Key: the same body again gets the first answer and imports nothing more; another body, 422', async () => {
      const user = await createUser(db().store);
      const key = { 'idempotency-key': randomUUID() };
      const first = await importBody(user.id, 'application/json', JSON_BODY, key);
      const again = await importBody(user.id, 'application/json', JSON_BODY, key);
      expect({ status: again.status, body: again.json }).toEqual({ status: first.status, body: first.json });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(first.headers.get('idempotent-replayed')).toBeNull();
      expect(await total(user.id)).toBe(2);
      const other = await importBody(user.id, 'application/json', JSON_BODY.replace('Ada again', 'Ada once more'), key);
      expect(other.status).toBe(422);
      const otherType = await importBody(user.id, 'application/x-ndjson', NDJSON_BODY, key);
      expect(otherType.status).toBe(422);
      const malformed = await importBody(user.id, 'application/json', JSON_BODY, { 'idempotency-key': 'é' });
      expect(malformed.status).toBe(400);
      expect(await total(user.id)).toBe(2);
    });
  });

  describe('merge and delete', () => {
    let user: User;
    let changes: () => Promise<{ type: string; id: string; merged_into?: string }[]>;

    beforeAll(async () => {
      user = await createUser(db().store);
      const { key } = await createKey(db().store, user.id);
      let since = (await publicApp.inject({ url: '/api/v1/contacts/changes', headers: bearer(key) })).json().next_since as string;
      changes = async () => {
        const answer = (await publicApp.inject({ url: `/api/v1/contacts/changes?since=${since}`, headers: bearer(key) })).json();
        since = answer.next_since;
        return answer.data;
      };
    });

    const contactsOf = async (names: string[]) => {
      await importBody(user.id, 'application/x-ndjson', names.map((name) => JSON.stringify({ name })).join('\n'));
      const ids = await contactIds(user.id);
      await changes();
      return ids.slice(-names.length);
    };
    const merge = (contactId: string, body: unknown, userId = user.id) =>
      admin.request('POST', `/admin/v1/users/${userId}/contacts/${contactId}/merge`, { body });

    it('POST …/merge: 200 { merged, into }; the duplicate leaves the listing, the change feed records the merge', async () => {
      const [a, b] = (await contactsOf(['A', 'B'])) as [string, string];
      const answer = await merge(b.toUpperCase(), { into: a });
      expect({ status: answer.status, body: answer.json }).toEqual({ status: 200, body: { merged: b, into: a } });
      expect(await contactIds(user.id)).not.toContain(b);
      expect(await changes()).toEqual([expect.objectContaining({ type: 'merge', id: b, merged_into: a })]);
    });

    it('POST …/merge: 404 for an unknown user or contact, 400 for itself, a merged contact or no into; an Idempotency-Key replays', async () => {
      const [a, b, c] = (await contactsOf(['A', 'B', 'C'])) as [string, string, string];
      const unknown = randomUUID();
      const refusals: [Promise<AdminAnswer>, number, string][] = [
        [merge(b, { into: a }, unknown), 404, `No user with id "${unknown}"`],
        [merge(unknown, { into: a }), 404, `Contact ${unknown} is not one of this user's contacts`],
        [merge(b, { into: unknown }), 404, `Contact ${unknown} is not one of this user's contacts`],
        [merge(b, { into: b }), 400, 'A contact cannot be merged into itself'],
        [merge(b, {}), 400, 'into is required'],
        [merge(b, { into: a, also: c }), 400, 'unknown field "also"'],
      ];
      for (const [answer, status, error] of refusals)
        expect({ status: (await answer).status, error: (await answer).json.error }).toEqual({ status, error });

      const key = { 'idempotency-key': randomUUID() };
      const first = await admin.request('POST', `/admin/v1/users/${user.id}/contacts/${b}/merge`, { body: { into: a }, headers: key });
      const again = await admin.request('POST', `/admin/v1/users/${user.id}/contacts/${b}/merge`, { body: { into: a }, headers: key });
      expect({ status: again.status, body: again.json, replayed: again.headers.get('idempotent-replayed') }).toEqual({
        status: first.status,
        body: first.json,
        replayed: 'true',
      });
      const mergedAlready = await merge(b, { into: c });
      expect({ status: mergedAlready.status, error: mergedAlready.json.error }).toEqual({
        status: 400,
        error: `Contact ${b} is already merged into ${a} and cannot be merged`,
      });
    });

    it('DELETE …/contacts/{contactId}: 204; the duplicates merged into it go too, each a delete in the change feed', async () => {
      const [a, b, c] = (await contactsOf(['A', 'B', 'C'])) as [string, string, string];
      await merge(b, { into: a });
      await changes();
      const deleted = await admin.request('DELETE', `/admin/v1/users/${user.id}/contacts/${a}`);
      expect({ status: deleted.status, body: deleted.text }).toEqual({ status: 204, body: '' });
      expect(await contactIds(user.id)).toContain(c);
      expect(await db().store.contacts.get(user.id, b)).toBeNull();
      expect((await changes()).map(({ type, id }) => [type, id]).sort()).toEqual(
        [
          ['delete', a],
          ['delete', b],
        ].sort(),
      );
    });

    it('DELETE …/contacts/{contactId}: 404 for an unknown user, an unknown or malformed contact, or one deleted already', async () => {
      const [a] = (await contactsOf(['A'])) as [string];
      await admin.request('DELETE', `/admin/v1/users/${user.id}/contacts/${a}`);
      const unknown = randomUUID();
      for (const [path, error] of [
        [`${unknown}/contacts/${a}`, `No user with id "${unknown}"`],
        [`${user.id}/contacts/${unknown}`, `Contact ${unknown} is not one of this user's contacts`],
        [`${user.id}/contacts/not-an-id`, `Contact not-an-id is not one of this user's contacts`],
        [`${user.id}/contacts/${a}`, `Contact ${a} is not one of this user's contacts`],
      ]) {
        const answer = await admin.request('DELETE', `/admin/v1/users/${path}`);
        expect({ path, status: answer.status, body: answer.json }).toEqual({ path, status: 404, body: { error } });
      }
    });
  });
});
