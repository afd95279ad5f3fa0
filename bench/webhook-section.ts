/** The webhook scenario on scratch databases (SQLite, and PostgreSQL when asked): its report section. */
import { rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { type DatabaseContext, postgresDatabase } from './databases.js';
import { measureWebhooks, webhookTable } from './webhooks.js';

export async function webhookScenario(context: DatabaseContext & { bin: string; withPostgres: boolean; port: number }): Promise<string> {
  const figures = [];
  const path = join(context.work, 'webhooks-scratch.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  const databases = [{ name: 'SQLite', url: `file:${path}` }];
  if (context.withPostgres) databases.push({ name: 'PostgreSQL', url: (await postgresDatabase(context, 'webhooks', true)).url });
  for (const { name, url } of databases) {
    context.cli(url, 'migrate');
    context.log(`measuring webhooks on ${name}`);
    figures.push(await measureWebhooks(name, url, context.bin, context.work, context.port, context.log));
  }
  return [
    `Webhooks: \`serve\` (one worker per core) delivering to one receiver on loopback that answers 204 at once, on ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; the receiver, the writes and the imports run on the same machine. Events per second from the first event's arrival to the last; write → first attempt from a single-contact write's return to its event's arrival, ${200} writes 50 ms apart.`,
    '',
    webhookTable(figures),
  ].join('\n');
}
