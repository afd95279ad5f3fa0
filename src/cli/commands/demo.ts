import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { DEFAULT_HOST, listenUrlOf, type Config } from '../../config.js';
import { generateApiKey, hashApiKey } from '../../domain/api-key.js';
import { CONTACTS_READ } from '../../domain/scopes.js';
import { dialectOf } from '../../store/open-store.js';
import type { Store, User } from '../../store/store.js';
import { withStore } from '../context.js';
import { keyStatus } from './keys.js';
import { print, type CliIo } from '../io.js';

export const DEMO_EMAIL = 'demo@example.com';
const DEMO_CONTACTS = 300;
const DEMO_DUPLICATES = 12;
/** The label of the key the demo prints: the demo keeps one such key active. */
const DEMO_KEY_LABEL = 'demo';

export function registerDemoCommand(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description('create (once) a Pro demo user with generated contacts; print a fresh key, revoking the last one, and a curl line')
    .option('--json', 'print one JSON object')
    .action(async (options: { json?: boolean }) => {
      const result = await withStore(io, async (store, config) => {
        const user = await ensureDemoUser(store);
        const key = generateApiKey(config.apiKeyPrefix);
        const created = await store.keys.create({
          ownerId: user.id,
          label: DEMO_KEY_LABEL,
          scopes: [CONTACTS_READ],
          secretHash: hashApiKey(key),
          expiresAt: null,
        });
        const revoked = await revokeOtherDemoKeys(store, user.id, created.id);
        const total = (await store.contacts.listPage(user.id, { limit: 1, offset: 0 })).total;
        const curl = `curl -s -H "Authorization: Bearer ${key}" "${listenUrlOf(config.host, config.port)}/api/v1/contacts?limit=2"`;
        return { user: user.email, key, key_id: created.id, revoked_keys: revoked, contacts: total, curl, serve: serveCommand(config) };
      });
      print(
        io,
        options,
        result,
        [
          `Demo user ${result.user} (pro) has ${result.contacts} contacts.`,
          `API key (shown only now): ${result.key}`,
          ...result.revoked_keys.map((id) => `Revoked the previous demo key ${id}: one demo key is active at a time.`),
          `With the server running (${result.serve}), try:`,
          `  ${result.curl}`,
        ].join('\n'),
      );
    });
}

/** Revokes the demo user's other active demo keys, so that running the demo again leaves one; returns their ids. */
async function revokeOtherDemoKeys(store: Store, demoUserId: string, keptKeyId: string): Promise<string[]> {
  const now = Date.now();
  const replaced = (await store.keys.listForOwner(demoUserId)).filter(
    (record) => record.label === DEMO_KEY_LABEL && record.id !== keptKeyId && keyStatus(record, now) === 'active',
  );
  for (const record of replaced) await store.keys.revoke(record.id);
  return replaced.map((record) => record.id);
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
 * The command that serves this database where the curl line points, runnable from any directory and whatever the
 * shell's PORT and HOST: the built CLI and the database by absolute path (a PostgreSQL URL is not repeated, as it
 * may hold a password), the port always and the address when it is not the default.
 */
function serveCommand(config: Config): string {
  const address = config.host === DEFAULT_HOST ? '' : ` --host ${config.host}`;
  const cli = `node ${fileURLToPath(new URL('../main.js', import.meta.url))} serve${address} --port ${config.port}`;
  const url = dialectOf(config.database).printableUrl(config.database);
  return url === null ? `${cli}, with the same DATABASE_URL` : `DATABASE_URL=${url} ${cli}`;
}
