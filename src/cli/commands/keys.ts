import type { Command } from 'commander';
import { parseDuration } from '../../domain/duration.js';
import { CONTACTS_READ, parseScopes } from '../../domain/scopes.js';
import { createKey, listKeys, revokeKey, type ListedKey } from '../../operations/keys.js';
import { withStore } from '../context.js';
import { print, type CliIo } from '../io.js';

export function registerKeyCommands(program: Command, io: CliIo): void {
  const keys = program.command('keys').description('manage API keys');

  keys
    .command('create')
    .description('create an API key; the key is printed once and only its hash is stored')
    .requiredOption('--user <email|id>', 'the key’s owner')
    .option('--label <label>', 'what the key is for')
    .option('--scopes <scopes>', 'comma-separated scopes; "" for none', CONTACTS_READ)
    .option('--expires-in <duration>', 'lifetime such as 30s, 15m, 12h or 90d (default: never)')
    .option('--json', 'print one JSON object')
    .action(async (options: { user: string; label?: string; scopes: string; expiresIn?: string; json?: boolean }) => {
      const scopes = parseScopes(options.scopes);
      const expires = options.expiresIn === undefined ? null : { lifetimeMs: parseDuration(options.expiresIn) };
      const { record, key, planAllowsUse } = await withStore(io, (store, config) =>
        createKey(store, config.apiKeyPrefix, { user: options.user, label: options.label, scopes, expires }),
      );
      print(
        io,
        options,
        { id: record.id, key, scopes: record.scopes, expires_at: record.expires_at },
        [
          `Created key ${record.id}${record.expires_at ? ` (expires ${record.expires_at})` : ''}`,
          `Scopes: ${record.scopes.join(', ') || '(none)'}`,
          `Key (shown only now; store it safely): ${key}`,
        ].join('\n'),
      );
      if (!options.json && !planAllowsUse)
        io.stderr('note: this user is on the free plan; the key is refused (403) until the user is on pro\n');
    });

  keys
    .command('list')
    .description('list a user’s keys (never their secrets)')
    .requiredOption('--user <email|id>', 'the keys’ owner')
    .option('--json', 'print one JSON object')
    .action(async (options: { user: string; json?: boolean }) => {
      const listed = await withStore(io, (store) => listKeys(store, options.user));
      const human = listed.length === 0 ? 'No keys' : listed.map(describeKey).join('\n');
      print(io, options, { keys: listed }, human);
    });

  keys
    .command('revoke')
    .description('revoke a key; a running server refuses it at once')
    .argument('<key-id>', 'the key’s id, as shown by keys list')
    .option('--json', 'print one JSON object')
    .action(async (keyId: string, options: { json?: boolean }) => {
      const record = await withStore(io, (store) => revokeKey(store, keyId));
      print(io, options, { id: record.id, revoked_at: record.revoked_at }, `Revoked key ${record.id} at ${record.revoked_at}`);
    });
}

function describeKey(key: ListedKey): string {
  return [
    key.id,
    key.status,
    key.label ?? '-',
    `scopes=${key.scopes.join(',') || '(none)'}`,
    `created=${key.created_at}`,
    `expires=${key.expires_at ?? 'never'}`,
    `last_used=${key.last_used_at ?? 'never'}`,
  ].join('  ');
}
