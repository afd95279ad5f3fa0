import { readdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Contact } from 'contacts-read-api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachBackend } from '../support/backends.js';
import { changeNetwork, restListing, seedCarddavNetwork, type CarddavNetwork } from '../support/carddav-network.js';
import { startDavRecorder, trafficOf, type DavRecorder } from '../support/dav-recorder.js';
import { externalToolPresent } from '../support/external-tool.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { expectCardsEqualListing, readCardFiles, type CardFile } from '../support/vcard-files.js';
import { setUpVdirsyncer, VDIRSYNCER, vdirsyncerDirectory, vdirsyncerInstalled, type VdirsyncerSetup } from '../support/vdirsyncer.js';

/** The network: 10,000 listed contacts, and duplicates merged into some of them. */
const NETWORK = 10_000;
const DUPLICATES = 25;
/** 100 changes made through the CLI between two syncs. */
const CHANGES = { edits: 50, merges: 25, deletes: 25 };
/** The collection name vdirsyncer gives the book: the last segment of its URL. */
const BOOK = 'contacts';
/** vdirsyncer on 10,000 cards, a seeded PostgreSQL, on a shared 2-core machine. */
const SLOW = 240_000;

const present = externalToolPresent('vdirsyncer against the CardDAV address book', vdirsyncerInstalled, 'apt-get install vdirsyncer');

describe.runIf(present)('vdirsyncer (Debian) against the CardDAV address book', () => {
  describeEachBackend('vdirsyncer discovers and syncs a 10,000-contact network', (db) => {
    let server: ServerProcess;
    let recorder: DavRecorder;
    let network: CarddavNetwork;
    let dir: string;
    let vdirsyncer: VdirsyncerSetup;
    /** The cards on disk and the listing after the first sync: what the second is compared with. */
    let first: { cards: Map<string, CardFile>; listing: Map<string, Contact> } | undefined;
    const listing = () => restListing(server.url, network.key);

    beforeAll(async () => {
      expect(vdirsyncerInstalled(), `${VDIRSYNCER} is missing; CI installs it (.ci/run)`).toBe(true);
      network = await seedCarddavNetwork(db().databaseUrl, NETWORK, DUPLICATES);
      server = await startServerProcess({ DATABASE_URL: db().databaseUrl, LOG_LEVEL: 'warn' });
      recorder = await startDavRecorder(server.url);
      dir = await vdirsyncerDirectory();
      // The user name is the user's email, as a phone's account screen asks; the server reads only the key.
      vdirsyncer = await setUpVdirsyncer(dir, recorder.url, network.email, network.key);
    }, SLOW);
    afterAll(async () => {
      await recorder?.close();
      await server?.kill();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('discovers the one address book from the server’s base URL alone', async () => {
      const result = await vdirsyncer.run('discover');
      expect(result.code, result.stderr).toBe(0);
      expect(await readdir(dirname(vdirsyncer.cardsOf(BOOK)))).toEqual([BOOK]);
      const traffic = trafficOf(recorder.take());
      expect(Object.keys(traffic.methods).sort()).toEqual(['PROPFIND']);
    });

    it(
      'syncs every listed contact as one card: same ids, names and emails; no merged duplicate, no self row',
      async () => {
        const started = Date.now();
        const result = await vdirsyncer.run('sync');
        const seconds = (Date.now() - started) / 1000;
        expect(result.code, result.stderr).toBe(0);
        const traffic = trafficOf(recorder.take());
        first = { cards: await readCardFiles(vdirsyncer.cardsOf(BOOK)), listing: await listing() };
        expectCardsEqualListing(first.cards.values(), first.listing, network);
        expect(traffic.cardsAsked).toBe(NETWORK);
        console.info(`[vdirsyncer ${db().backend}] first sync: ${seconds.toFixed(1)} s, ${JSON.stringify(traffic)}`);
      },
      SLOW,
    );

    it(
      'after 100 edits, merges and deletes through the CLI, the next sync moves exactly those cards and fetches only the changed',
      async () => {
        if (!first) throw new Error('the first sync did not run');
        const { cards: before, listing: listedBefore } = first;
        const changes = await changeNetwork(db().databaseUrl, server.url, network, CHANGES);

        const started = Date.now();
        const result = await vdirsyncer.run('sync');
        const seconds = (Date.now() - started) / 1000;
        expect(result.code, result.stderr).toBe(0);
        const traffic = trafficOf(recorder.take());
        const after = await readCardFiles(vdirsyncer.cardsOf(BOOK));
        const listedAfter = await listing();
        expectCardsEqualListing(after.values(), listedAfter, network);

        // What moved on disk, by contact id, against what changed in the listing.
        const idOf = (file: string) => before.get(file)!.id!;
        const removed = [...before.keys()].filter((file) => !after.has(file)).map(idOf);
        const rewritten = [...before.keys()]
          .filter((file) => after.has(file) && after.get(file)!.text !== before.get(file)!.text)
          .map(idOf);
        const touched = [...before.keys()]
          .filter((file) => after.has(file) && after.get(file)!.mtimeMs !== before.get(file)!.mtimeMs)
          .map(idOf);
        const added = [...after.keys()].filter((file) => !before.has(file));
        const changedInListing = [...listedAfter.keys()].filter(
          (id) => JSON.stringify(listedAfter.get(id)) !== JSON.stringify(listedBefore.get(id)),
        );

        expect(added).toEqual([]);
        expect(removed.sort()).toEqual([...changes.merged, ...changes.deleted].sort());
        expect(rewritten.sort()).toEqual(changedInListing.sort());
        expect(touched.sort()).toEqual(rewritten.sort());
        for (const id of changes.edited) expect(rewritten).toContain(id);
        expect(removed.length + rewritten.length).toBeGreaterThanOrEqual(100);
        // The cards fetched are the changed ones only: vdirsyncer compares ETags from one PROPFIND and multigets the rest.
        expect(traffic.cardsAsked).toBe(rewritten.length);
        console.info(
          `[vdirsyncer ${db().backend}] sync after 100 changes: ${seconds.toFixed(1)} s, ${rewritten.length} cards rewritten, ${removed.length} removed, ${JSON.stringify(traffic)}`,
        );
      },
      SLOW,
    );
  });
});
