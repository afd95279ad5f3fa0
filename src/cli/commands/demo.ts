import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { DatabaseTarget } from '../../store/open-store.js';
import { generateApiKey, hashApiKey } from '../../domain/api-key.js';
import { CONTACTS_READ } from '../../domain/scopes.js';
import type { Store, User } from '../../store/store.js';
import { withStore } from '../context.js';
import { print, type CliIo } from '../io.js';

export const DEMO_EMAIL = 'demo@example.com';
const DEMO_CONTACTS = 300;
const DEMO_DUPLICATES = 12;

export function registerDemoCommand(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description('create (once) a Pro demo user with generated contacts, and print a fresh key and a curl line')
    .option('--json', 'print one JSON object')
    .action(async (options: { json?: boolean }) => {
      const result = await withStore(io, async (store, config) => {
        const user = await ensureDemoUser(store);
        const key = generateApiKey(config.apiKeyPrefix);
        await store.keys.create({ ownerId: user.id, label: 'demo', scopes: [CONTACTS_READ], secretHash: hashApiKey(key), expiresAt: null });
        const total = (await store.contacts.listPage(user.id, { limit: 1, offset: 0 })).total;
        const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
        const base = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
        const curl = `curl -s -H "Authorization: Bearer ${key}" "${base}/api/v1/contacts?limit=2"`;
        return { user: user.email, key, contacts: total, curl, serve: serveCommand(config.database) };
      });
      print(
        io,
        options,
        result,
        [
          `Demo user ${result.user} (pro) has ${result.contacts} contacts.`,
          `API key (shown only now): ${result.key}`,
          `With the server running (${result.serve}), try:`,
          `  ${result.curl}`,
        ].join('\n'),
      );
    });
}

async function ensureDemoUser(store: Store): Promise<User> {
  const existing = await store.users.find(DEMO_EMAIL);
  if (existing) return existing.plan === 'pro' ? existing : store.users.setPlan(existing.id, 'pro');
  const user = await store.users.create({ email: DEMO_EMAIL, name: 'Demo User', plan: 'pro' });
  // Loaded here: faker takes about 30 MB, which every other command (serve, in each worker) would carry for nothing.
  const { generateDemoContacts } = await import('../../demo/demo-contacts.js');
  const records = generateDemoContacts(DEMO_CONTACTS + DEMO_DUPLICATES, 42, new Date());
  // The last few generated contacts become duplicates of earlier ones, then are soft-merged into them.
  const merges = records.slice(DEMO_CONTACTS).map((duplicate, index) => {
    const original = records[index * 7]!.contact;
    duplicate.contact.values = { ...duplicate.contact.values, name: original.values.name, email: original.values.email };
    return { duplicateId: duplicate.contact.id!, survivorId: original.id! };
  });
  await store.contacts.importContacts(user.id, records);
  for (const { duplicateId, survivorId } of merges) await store.contacts.merge(user.id, duplicateId, survivorId);
  return user;
}

/**
 * The command that serves this database, runnable from any directory: the built CLI and the database by absolute
 * path (a PostgreSQL URL is not repeated, as it may hold a password).
 */
function serveCommand(database: DatabaseTarget): string {
  const cli = `node ${fileURLToPath(new URL('../main.js', import.meta.url))} serve`;
  return database.kind === 'sqlite' ? `DATABASE_URL=file:${database.path} ${cli}` : `${cli}, with the same DATABASE_URL`;
}
