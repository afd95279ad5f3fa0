import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tooManyRecords } from '../../src/import/read-contacts.js';
import { describeEachBackend } from '../support/backends.js';
import { BIN, writeTempFile } from '../support/cli.js';
import { childPids } from '../support/process-tree.js';
import { createUser } from '../support/seed.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';

const ADMIN_TOKEN = 'import-memory-admin-token-0123456789-abcdef';
const MIB = 1024 * 1024;
/** The bound the issue sets on a worker's (or the CLI's) peak resident memory during an import. */
const PEAK_RSS_BOUND_MB = 512;
/** The body: about 300,000 of the smallest records, 10 MB, which used to end the worker out of heap. */
const REPORTED_RECORDS = 300_000;
/** The cap of the server that is sent 64 MB: refused after this many records, so the test stays short. */
const SMALL_CAP = 20_000;
/** 300,000 records take 20 to 60 s on a loaded machine, on either database. */
const LONG_IMPORT_MS = 240_000;

/** NDJSON of `count` of the smallest records an import takes, the issue's `{"name":"x123","email":null}`. */
function smallestRecords(count: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`{"name":"x${i}","email":null}`);
  return Buffer.from(`${lines.join('\n')}\n`);
}

/** The largest resident set the process has had (VmHWM), in MB. */
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) / 1024;
}

/**
 * Posts the body in chunks, without Content-Length, and resolves with the answer as soon as it comes, even before every
 * chunk is sent (a refusal comes while a 64 MB body is still being sent).
 */
function postInChunks(url: string, body: Buffer): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' },
    });
    request.on('response', (response) => {
      const received: Buffer[] = [];
      response.on('data', (chunk: Buffer) => received.push(chunk));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode!, json: JSON.parse(Buffer.concat(received).toString('utf8')) });
      });
    });
    request.on('error', reject);
    let at = 0;
    const sendMore = () => {
      while (at < body.length) {
        const chunk = body.subarray(at, at + 64 * 1024);
        at += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', sendMore);
      }
      request.end();
    };
    sendMore();
  });
}

/** A real `serve --workers 2`, whose workers have the heap `serve` gives them (WORKER_HEAP_MB), with its admin API. */
async function startCluster(databaseUrl: string, env: Record<string, string> = {}): Promise<{ server: ServerProcess; adminUrl: string }> {
  const server = await startServerProcess({
    DATABASE_URL: databaseUrl,
    WORKERS: '2',
    ADMIN_TOKEN,
    ADMIN_PORT: '0',
    LOG_LEVEL: 'warn',
    ...env,
  });
  await vi.waitFor(() => expect(server.output().match(/Admin API on (\S+)/g)).toHaveLength(2), { timeout: 20_000, interval: 25 });
  return { server, adminUrl: new URL(/Admin API on (\S+)/.exec(server.output())![1]!).origin };
}

describeEachBackend('an import of many small records: memory bounded, in real processes', (db) => {
  const total = async (ownerId: string) => (await db().store.contacts.listPage(ownerId, { limit: 1, offset: 0 })).total;
  const reported = smallestRecords(REPORTED_RECORDS);

  describe('the admin API of serve --workers 2', () => {
    let cluster: { server: ServerProcess; adminUrl: string };
    let workers: number[];
    beforeAll(async () => {
      cluster = await startCluster(db().databaseUrl);
      workers = childPids(cluster.server.child.pid!);
      expect(workers).toHaveLength(2);
    });
    afterAll(async () => {
      await cluster?.server.kill();
    });

    it(
      'imports the reported 10 MB body of 300,000 records whole; no worker dies or passes 512 MB',
      async () => {
        const owner = await createUser(db().store);
        expect(reported.length).toBeGreaterThan(9 * MIB);

        const answer = await postInChunks(`${cluster.adminUrl}/admin/v1/users/${owner.id}/contacts/import`, reported);

        expect({ status: answer.status, imported: answer.json.imported, created: answer.json.created }).toEqual({
          status: 200,
          imported: REPORTED_RECORDS,
          created: REPORTED_RECORDS,
        });
        expect(await total(owner.id)).toBe(REPORTED_RECORDS);
        expect(childPids(cluster.server.child.pid!), 'the same two workers still serve').toEqual(workers);
        for (const worker of workers) expect(peakRssMb(worker), `worker ${worker}'s peak RSS`).toBeLessThan(PEAK_RSS_BOUND_MB);
      },
      LONG_IMPORT_MS,
    );
  });

  describe('with ADMIN_IMPORT_MAX_RECORDS', () => {
    let cluster: { server: ServerProcess; adminUrl: string };
    beforeAll(async () => {
      cluster = await startCluster(db().databaseUrl, { ADMIN_IMPORT_MAX_RECORDS: String(SMALL_CAP) });
    });
    afterAll(async () => {
      await cluster?.server.kill();
    });

    it(
      'refuses a 64 MB body of the smallest records whole with a 413 naming the cap; nothing is imported, no worker dies',
      async () => {
        const owner = await createUser(db().store);
        const workers = childPids(cluster.server.child.pid!);
        const body = smallestRecords(2_400_000).subarray(0, 64 * MIB);

        const answer = await postInChunks(`${cluster.adminUrl}/admin/v1/users/${owner.id}/contacts/import`, body);

        expect(answer).toEqual({ status: 413, json: { error: tooManyRecords('the body', SMALL_CAP) } });
        expect(await total(owner.id)).toBe(0);
        expect(childPids(cluster.server.child.pid!)).toEqual(workers);
        for (const worker of workers) expect(peakRssMb(worker)).toBeLessThan(PEAK_RSS_BOUND_MB);
      },
      LONG_IMPORT_MS,
    );
  });

  it(
    'contacts import of the same 10 MB file, as a process: imported whole, its peak RSS under 512 MB',
    async () => {
      const owner = await createUser(db().store);
      const file = writeTempFile('smallest.ndjson', reported.toString('utf8'));
      const child = spawn(process.execPath, [BIN, 'contacts', 'import', '--user', owner.id, file, '--json'], {
        env: { ...process.env, DATABASE_URL: db().databaseUrl, API_KEY_PREFIX: 'cnt' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      // VmHWM is gone with the process: read it while it runs, the last reading just before it exits.
      let peak = 0;
      const sample = setInterval(() => {
        try {
          peak = Math.max(peak, peakRssMb(child.pid!));
        } catch {
          // exited between two samples
        }
      }, 50);
      const [code] = (await once(child, 'close')) as [number | null];
      clearInterval(sample);

      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(JSON.parse(stdout)).toMatchObject({ imported: REPORTED_RECORDS, created: REPORTED_RECORDS });
      expect(await total(owner.id)).toBe(REPORTED_RECORDS);
      expect(peak).toBeGreaterThan(0);
      expect(peak).toBeLessThan(PEAK_RSS_BOUND_MB);
    },
    LONG_IMPORT_MS,
  );
});
