import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  /** Where the cards of collection `name` are written: `<dir>/cards/<name>/`. */
  cardsOf(name: string): string;
  run(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/**
 * Writes the config an end user would: type carddav with the server's base URL only (discovery finds the book), any
 * user name and the API key as the password, read-only; a filesystem storage with fileext .vcf; every collection of
 * the server.
 */
export async function setUpVdirsyncer(dir: string, baseUrl: string, username: string, password: string): Promise<VdirsyncerSetup> {
  const cards = join(dir, 'cards');
  await mkdir(cards, { recursive: true });
  const config = join(dir, 'config');
  const quoted = (value: string) => JSON.stringify(value);
  await writeFile(
    config,
    [
      '[general]',
      `status_path = ${quoted(join(dir, 'status'))}`,
      '',
      '[pair phone]',
      'a = "server"',
      'b = "local"',
      'collections = ["from a"]',
      '',
      '[storage server]',
      'type = "carddav"',
      `url = ${quoted(`${baseUrl}/`)}`,
      `username = ${quoted(username)}`,
      `password = ${quoted(password)}`,
      'read_only = true',
      '',
      '[storage local]',
      'type = "filesystem"',
      `path = ${quoted(`${cards}/`)}`,
      'fileext = ".vcf"',
      '',
    ].join('\n'),
  );
  return {
    config,
    cardsOf: (name) => join(cards, name),
    run: (...args) => runVdirsyncer(dir, config, args),
  };
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
