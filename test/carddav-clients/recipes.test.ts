import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Contact } from 'contacts-read-api-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachBackend } from '../support/backends.js';
import { changeNetwork, restListing, seedCarddavNetwork, type CarddavNetwork } from '../support/carddav-network.js';
import { cliJson, writeTempFile } from '../support/cli.js';
import { startDavRecorder, trafficOf, type DavRecorder } from '../support/dav-recorder.js';
import { docRecipe } from '../support/doc-recipes.js';
import { externalToolPresent } from '../support/external-tool.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { expectCardsEqualListing, readCard, readCardFiles } from '../support/vcard-files.js';
import { setUpVdirsyncer, vdirsyncerDirectory, vdirsyncerInstalled, type VdirsyncerSetup } from '../support/vdirsyncer.js';

const NETWORK = 40;
const DUPLICATES = 2;
const CHANGES = { edits: 3, merges: 1, deletes: 2 };
/** The collection name vdirsyncer gives the book: the last segment of its URL. */
const BOOK = 'contacts';
const SLOW = 60_000;
const NODE_MODULES = resolve(import.meta.dirname, '../../node_modules');

const present = externalToolPresent("docs/carddav.md's vdirsyncer recipe", vdirsyncerInstalled, 'apt-get install vdirsyncer');

/** docs/carddav.md's tsdav script as written, with the test's server and user, in a directory where `tsdav` resolves. */
async function setUpTsdavScript(baseUrl: string, username: string, key: string) {
  const dir = await mkdtemp(join(tmpdir(), 'contacts-tsdav-'));
  await symlink(NODE_MODULES, join(dir, 'node_modules'));
  const code = docRecipe('docs/carddav.md', 'tsdav', { 'https://contacts.example.com': baseUrl, 'you@example.com': username });
  await writeFile(join(dir, 'sync-contacts.mjs'), code);
  return {
    dir,
    /** `CONTACTS_API_KEY=… node sync-contacts.mjs`, as the doc says to run it, in its directory. */
    async run() {
      const child = spawn(process.execPath, ['sync-contacts.mjs'], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir, CONTACTS_API_KEY: key },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
      const [code] = (await once(child, 'close')) as [number | null];
      return { code, stdout, stderr };
    },
    /** Where the script keeps the book between runs. */
    state: join(dir, 'contacts-sync.json'),
    /** The cards the script keeps. */
    async cards() {
      const state = JSON.parse(await readFile(this.state, 'utf8')) as { objects: { url: string; data: string }[] };
      return Promise.all(state.objects.map((card) => readCard(card.data, card.url)));
    },
  };
}

describe.runIf(present)("docs/carddav.md's recipes, run as written", () => {
  describeEachBackend('vdirsyncer’s config and the tsdav script against a server', (db) => {
    let server: ServerProcess;
    let recorder: DavRecorder;
    let network: CarddavNetwork;
    let vdirsyncerDir: string;
    let vdirsyncer: VdirsyncerSetup;
    let tsdav: Awaited<ReturnType<typeof setUpTsdavScript>>;
    let listedFirst: Map<string, Contact> | undefined;
    const listing = () => restListing(server.url, network.key);

    beforeAll(async () => {
      network = await seedCarddavNetwork(db().databaseUrl, NETWORK, DUPLICATES);
      server = await startServerProcess({ DATABASE_URL: db().databaseUrl, LOG_LEVEL: 'warn' });
      recorder = await startDavRecorder(server.url);
      vdirsyncerDir = await vdirsyncerDirectory();
      vdirsyncer = await setUpVdirsyncer(vdirsyncerDir, recorder.url, network.email, network.key);
      tsdav = await setUpTsdavScript(recorder.url, network.email, network.key);
    }, SLOW);
    afterAll(async () => {
      await recorder?.close();
      await server?.kill();
      for (const dir of [vdirsyncerDir, tsdav?.dir]) if (dir) await rm(dir, { recursive: true, force: true });
    });

    it(
      'first runs: vdirsyncer discovers the book and syncs it to files; the tsdav script fetches every card',
      async () => {
        for (const args of [['discover', BOOK], ['sync']]) {
          const result = await vdirsyncer.run(...args);
          expect(result.code, result.stderr).toBe(0);
        }
        listedFirst = await listing();
        expectCardsEqualListing((await readCardFiles(vdirsyncer.cardsOf(BOOK))).values(), listedFirst, network);

        const first = await tsdav.run();
        expect(first.code, first.stderr).toBe(0);
        expect(first.stdout).toBe(`${NETWORK} cards\n`);
        expectCardsEqualListing(await tsdav.cards(), listedFirst, network);
        recorder.take();
      },
      SLOW,
    );

    it(
      'after a contact is added, some edited, merged and deleted, each next run brings exactly those changes',
      async () => {
        if (!listedFirst) throw new Error('the first runs did not happen');
        const added = { id: crypto.randomUUID(), name: 'Added Later', email: 'added.later@example.com' };
        await cliJson(
          db().databaseUrl,
          'contacts',
          'import',
          '--user',
          network.userId,
          writeTempFile('added.json', JSON.stringify([added])),
        );
        network.listed.push(added.id);
        const changes = await changeNetwork(db().databaseUrl, server.url, network, CHANGES);
        const listed = await listing();
        const before = listedFirst;
        const changed = [...listed.keys()].filter((id) => JSON.stringify(listed.get(id)) !== JSON.stringify(before.get(id)));
        expect(changed).toContain(added.id);
        for (const id of changes.edited) expect(changed).toContain(id);
        const gone = [...changes.merged, ...changes.deleted];

        // vdirsyncer compares every ETag in one PROPFIND, then fetches the changed cards alone.
        const synced = await vdirsyncer.run('sync');
        expect(synced.code, synced.stderr).toBe(0);
        expectCardsEqualListing((await readCardFiles(vdirsyncer.cardsOf(BOOK))).values(), listed, network);
        expect(trafficOf(recorder.take()).cardsAsked).toBe(changed.length);

        // The script asks what changed since its token (sync-collection), then fetches those cards in one multiget.
        const next = await tsdav.run();
        expect(next.code, next.stderr).toBe(0);
        expect(next.stdout).toBe(`1 new, ${changed.length - 1} changed, ${gone.length} removed: ${listed.size} cards\n`);
        expectCardsEqualListing(await tsdav.cards(), listed, network);
        const traffic = trafficOf(recorder.take());
        expect(traffic.methods.REPORT).toBe(2);
        expect(traffic.cardsAsked).toBe(changed.length);
      },
      SLOW,
    );

    it(
      'a token the server refuses fails the script as the doc says; without its file, the script fetches the book again',
      async () => {
        const state = JSON.parse(await readFile(tsdav.state, 'utf8')) as { syncToken: string };
        await writeFile(tsdav.state, JSON.stringify({ ...state, syncToken: `${state.syncToken.slice(0, -4)}AAAA` }));
        const refused = await tsdav.run();
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toContain('Collection sync failed: 403 Forbidden');

        await rm(tsdav.state);
        const again = await tsdav.run();
        expect(again.code, again.stderr).toBe(0);
        const listed = await listing();
        expect(again.stdout).toBe(`${listed.size} cards\n`);
        expectCardsEqualListing(await tsdav.cards(), listed, network);
      },
      SLOW,
    );
  });
});
