import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { docRecipe } from './doc-recipes.js';

/** Debian's package (`apt-get install vdirsyncer`). */
export const VDIRSYNCER = process.env.VDIRSYNCER_PATH ?? '/usr/bin/vdirsyncer';

export const vdirsyncerInstalled = (): boolean => existsSync(VDIRSYNCER);

/**
 * A fresh directory for vdirsyncer's cards and status, in memory (/dev/shm) where there is one: vdirsyncer fsyncs every
 * card it writes, and on this machine's disk 10,000 fsyncs took 75 of a first sync's 90 s, none of it the server's.
 */
export function vdirsyncerDirectory(): Promise<string> {
  return mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'contacts-vdirsyncer-'));
}

/** A vdirsyncer set-up in its own directory: one pair from the server's address books to `.vcf` files. */
export interface VdirsyncerSetup {
  config: string;
  /** The folder vdirsyncer writes collection `name`'s cards to. */
  cardsOf(name: string): string;
  run(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/**
 * vdirsyncer set up as docs/carddav.md tells a reader to: its config recipe as written, with the server's base URL, a
 * user name and the API key in place of the doc's. `dir` is vdirsyncer's HOME, so the recipe's `~` paths are in it.
 */
export async function setUpVdirsyncer(dir: string, baseUrl: string, username: string, password: string): Promise<VdirsyncerSetup> {
  const config = docRecipe('docs/carddav.md', 'vdirsyncer', {
    'https://contacts.example.com/': `${baseUrl}/`,
    'you@example.com': username,
    'cnt_live_…': password,
  });
  // The recipe's filesystem path, `~/.local/share/contacts/`, holds a folder per collection.
  return { ...(await vdirsyncerWithConfig(dir, config)), cardsOf: (name) => join(dir, '.local/share/contacts', name) };
}

/** vdirsyncer with this config text, written to `dir`, which is also its HOME: a `~` in the config is `dir`. */
export async function vdirsyncerWithConfig(dir: string, text: string): Promise<Omit<VdirsyncerSetup, 'cardsOf'>> {
  const config = join(dir, 'config');
  await writeFile(config, text);
  return { config, run: (...args) => runVdirsyncer(dir, config, args) };
}

function runVdirsyncer(home: string, config: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(VDIRSYNCER, ['-c', config, ...args], {
    // Nothing of the caller's HOME or proxies: the config names everything.
    env: { PATH: process.env.PATH ?? '', HOME: home, LANG: 'C.UTF-8', NO_PROXY: '127.0.0.1,localhost' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  // `discover` asks before it makes a local collection; answer yes as often as it asks.
  child.stdin.end('y\n'.repeat(20));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
