/**
 * What the benches that load a real `serve` share: a user with contacts seeded through the CLI, and the server as a
 * child process on a free port.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { generateDemoContacts } from '../src/demo/demo-contacts.js';

/** The CLI under test: BENCH_BIN names another build's dist/cli/main.js (`npm run bench -- --bin`). */
const BIN = process.env.BENCH_BIN ?? resolve(import.meta.dirname, '..', 'dist/cli/main.js');

async function cli<T>(env: NodeJS.ProcessEnv, ...cliArgs: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, ...cliArgs, '--json'], { env, maxBuffer: 16 * 1024 * 1024 });
  return JSON.parse(stdout) as T;
}

/** A Pro user with `contactCount` demo contacts, imported through the CLI into the database it creates if missing; returns its key. */
export async function seedOwner(env: NodeJS.ProcessEnv, work: string, contactCount: number, label: string): Promise<string> {
  await cli(env, 'migrate');
  const user = await cli<{ id: string }>(
    env,
    'users',
    'create',
    '--email',
    `${label}-${Date.now()}@example.com`,
    '--name',
    label,
    '--plan',
    'pro',
  );
  const { key } = await cli<{ key: string }>(env, 'keys', 'create', '--user', user.id, '--label', label);
  const file = join(work, `${label}.ndjson`);
  writeFileSync(
    file,
    generateDemoContacts(contactCount, 7, new Date())
      .map((record) => JSON.stringify(record.contact.values))
      .join('\n'),
  );
  await cli(env, 'contacts', 'import', '--user', user.id, file);
  return key;
}

export interface ServeProcess {
  url: string;
  pid: number;
  /** Everything the process wrote to stdout (its JSON log) so far. */
  stdout(): string;
  stop(): Promise<void>;
}

/** Starts `serve` on a free loopback port with `args`, and waits until it listens. */
export async function startServe(env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServeProcess> {
  const server = spawn(process.execPath, [BIN, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = once(server, 'exit');
  let stdout = '';
  server.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let stderr = '';
    server.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) resolveUrl(match[1]!);
    });
    server.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return {
    url,
    pid: server.pid!,
    stdout: () => stdout,
    stop: async () => {
      server.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resident set size of a process in MiB, from /proc/<pid>/status. */
export function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}
