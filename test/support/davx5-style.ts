import { execFile, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

/** Debian's python3, with python3-caldav (`apt-get install python3-caldav`). */
export const PYTHON = process.env.CALDAV_PYTHON ?? '/usr/bin/python3';
/** DAVx5's request sequence sent through python3-caldav's DAVClient (its docstring says which requests). */
const SCRIPT = resolve(import.meta.dirname, '../carddav-clients/davx5_style.py');

export const caldavInstalled = (): boolean => spawnSync(PYTHON, ['-c', 'import caldav'], { stdio: 'ignore' }).status === 0;

export interface DavAccount {
  baseUrl: string;
  username: string;
  password: string;
}

/**
 * Runs one step of the DAVx5-style client (`discover`, or `sync` of the book the state file names) and returns what it
 * printed. The state file is the phone's copy: the book's URL, the sync token, the ctag and every card.
 */
export async function runDavx5Style<T>(stateFile: string, command: 'discover' | 'sync', account: DavAccount): Promise<T> {
  const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, stateFile, command], {
    env: {
      PATH: process.env.PATH ?? '',
      NO_PROXY: '127.0.0.1,localhost',
      DAV_BASE_URL: account.baseUrl,
      DAV_USERNAME: account.username,
      DAV_PASSWORD: account.password,
    },
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(stdout) as T;
}
