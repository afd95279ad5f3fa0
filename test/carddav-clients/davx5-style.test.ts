import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Contact } from 'contacts-read-api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CHANGES_RETENTION_DAYS } from '../../src/config.js';
import { decodeSyncToken, encodeSyncToken } from '../../src/domain/changes.js';
import { readVcardRecords } from '../../src/import/formats/vcard.js';
import { describeEachBackend } from '../support/backends.js';
import { changeNetwork, restListing, seedCarddavNetwork, type CarddavNetwork } from '../support/carddav-network.js';
import { caldavInstalled, PYTHON, runDavx5Style } from '../support/davx5-style.js';
import { externalToolPresent } from '../support/external-tool.js';
import { serviceKeyOf } from '../support/service-key.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/** More cards than one page of the listing the server reads through, fewer than the rate limit's minute. */
const NETWORK = 1_200;
const DUPLICATES = 5;
const CHANGES = { edits: 10, merges: 5, deletes: 5 };
const DAY_MS = 86_400_000;

const present = externalToolPresent(
  'python3-caldav (DAVx5’s requests) against the CardDAV address book',
  caldavInstalled,
  'apt-get install python3-caldav',
);

interface Card {
  etag: string;
  vcard: string;
  contenttype: string;
}
interface PhoneState {
  book: string;
  token?: string;
  ctag?: string;
  cards?: Record<string, Card>;
}
interface SyncSummary {
  mode: 'initial' | 'incremental' | 'unchanged';
  downloaded: string[];
  removed: string[];
  multigets: number;
  invalid_token: { status: number; preconditions: string[] } | null;
  token?: string;
  error?: string;
  log: { method: string; status: number; report?: string }[];
}

describe.runIf(present)('DAVx5’s request sequence (python3-caldav) against the CardDAV address book', () => {
  describeEachBackend('a DAVx5-style client discovers the book and follows it with sync-collection', (db) => {
    let server: ServerProcess;
    let network: CarddavNetwork;
    let dir: string;
    const stateFile = () => join(dir, 'phone.json');
    const bookUrl = () => `${server.url}/dav/addressbooks/${network.userId}/contacts/`;
    const phone = <T>(command: 'discover' | 'sync') =>
      runDavx5Style<T>(stateFile(), command, { baseUrl: server.url, username: network.email, password: network.key });
    const state = async () => JSON.parse(await readFile(stateFile(), 'utf8')) as PhoneState;
    const editState = async (edit: (state: PhoneState) => void) => {
      const current = await state();
      edit(current);
      await writeFile(stateFile(), JSON.stringify(current));
    };

    /** The phone's cards are the listing: one per listed contact, by URL `<book><id>.vcf`, with its name and email. */
    async function expectPhoneEqualsListing(listing: Map<string, Contact>): Promise<void> {
      const cards = (await state()).cards ?? {};
      const onPhone = [];
      for (const [href, card] of Object.entries(cards)) {
        for await (const { fields } of readVcardRecords([card.vcard])) {
          onPhone.push({ href, id: fields.id, name: fields.name, email: fields.email, contenttype: card.contenttype.split(';')[0] });
        }
      }
      const listed = [...listing.values()].map(({ id, name, email }) => ({
        href: `${bookUrl()}${id}.vcf`,
        id,
        name: name ?? undefined,
        email: email ?? undefined,
        contenttype: 'text/vcard',
      }));
      const byHref = (a: { href: string }, b: { href: string }) => (a.href < b.href ? -1 : 1);
      expect(onPhone.sort(byHref)).toEqual(listed.sort(byHref));
      for (const hidden of [...network.merged, network.self]) expect(cards[`${bookUrl()}${hidden}.vcf`]).toBeUndefined();
    }

    beforeAll(async () => {
      expect(caldavInstalled(), `${PYTHON} cannot import caldav; CI installs python3-caldav (.ci/run)`).toBe(true);
      network = await seedCarddavNetwork(db().databaseUrl, NETWORK, DUPLICATES);
      server = await startServerProcess({ DATABASE_URL: db().databaseUrl, LOG_LEVEL: 'warn' });
      dir = await mkdtemp(join(tmpdir(), 'contacts-davx5-'));
    }, 120_000);
    afterAll(async () => {
      await server?.kill();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('discovers principal, home and the one read-only book from the base URL and from /.well-known/carddav', async () => {
      const found = await phone<any>('discover');
      const principal = `${server.url}/dav/principals/${network.userId}/`;
      expect(found.error).toBeUndefined();
      expect(found.well_known).toEqual({ status: 301, location: expect.stringMatching(/\/dav\/$/), principal });
      expect(found.principal).toBe(principal);
      expect(found.homes).toEqual([`${server.url}/dav/addressbooks/${network.userId}/`]);
      expect(found.books).toEqual([{ url: bookUrl(), displayname: expect.any(String), read_only: true }]);
    });

    it('first sync-collection (no token) brings every listed contact; no merged duplicate, no self row', async () => {
      const summary = await phone<SyncSummary>('sync');
      expect(summary.error).toBeUndefined();
      expect(summary.mode).toBe('initial');
      expect(summary.downloaded).toHaveLength(NETWORK);
      expect(summary.multigets).toBe(NETWORK / 10);
      expect(summary.token).toEqual(expect.any(String));
      await expectPhoneEqualsListing(await restListing(server.url, network.key));
    });

    it('a sync with nothing changed stops at the unchanged getctag', async () => {
      const summary = await phone<SyncSummary>('sync');
      expect(summary.mode).toBe('unchanged');
      expect(summary.log.map(({ method }) => method)).toEqual(['PROPFIND']);
    });

    it('after edits, merges and deletes: only the changed come back, merged and deleted as 404 members', async () => {
      const listedBefore = await restListing(server.url, network.key);
      const changes = await changeNetwork(db().databaseUrl, server.url, network, CHANGES);
      const listing = await restListing(server.url, network.key);
      const changed = [...listing.keys()].filter((id) => JSON.stringify(listing.get(id)) !== JSON.stringify(listedBefore.get(id)));

      const summary = await phone<SyncSummary>('sync');
      expect(summary.mode).toBe('incremental');
      expect(summary.invalid_token).toBeNull();
      const ids = (hrefs: string[]) => hrefs.map((href) => href.slice(bookUrl().length, -'.vcf'.length)).sort();
      expect(ids(summary.removed)).toEqual([...changes.merged, ...changes.deleted].sort());
      expect(ids(summary.downloaded)).toEqual(changed.sort());
      for (const id of changes.edited) expect(ids(summary.downloaded)).toContain(id);
      await expectPhoneEqualsListing(listing);
    });

    it('a garbage token gets 403 DAV:valid-sync-token; the full sync that follows downloads nothing unchanged', async () => {
      await editState((phoneState) => {
        phoneState.token = 'http://example.com/not-a-token-of-this-server';
        delete phoneState.ctag;
      });
      const summary = await phone<SyncSummary>('sync');
      expect(summary.invalid_token).toEqual({ status: 403, preconditions: ['valid-sync-token'] });
      expect(summary.mode).toBe('initial');
      expect(summary.downloaded).toEqual([]);
      expect(summary.removed).toEqual([]);
      await expectPhoneEqualsListing(await restListing(server.url, network.key));
    });

    it('an expired token (this server’s, signed, older than the retention) gets the same 403, then a full sync', async () => {
      const key = await serviceKeyOf(db().store);
      await editState((phoneState) => {
        // The book's token is a URI ending in the change feed's token: the same position, issued past the retention.
        const split = phoneState.token!.lastIndexOf('/') + 1;
        const position = decodeSyncToken(phoneState.token!.slice(split), key);
        const expired = encodeSyncToken({ ...position, issuedAt: Date.now() - (DEFAULT_CHANGES_RETENTION_DAYS + 1) * DAY_MS }, key);
        phoneState.token = phoneState.token!.slice(0, split) + expired;
        delete phoneState.ctag;
      });
      const summary = await phone<SyncSummary>('sync');
      expect(summary.invalid_token).toEqual({ status: 403, preconditions: ['valid-sync-token'] });
      expect(summary.mode).toBe('initial');
      expect(summary.downloaded).toEqual([]);
      await expectPhoneEqualsListing(await restListing(server.url, network.key));
    });
  });
});
