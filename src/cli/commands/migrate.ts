import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { openCommandStore } from '../context.js';
import { print, type CliIo } from '../io.js';

export function registerMigrateCommand(program: Command, io: CliIo): void {
  program
    .command('migrate')
    .description('create the database if needed and apply pending migrations (serve applies them too, to an existing database)')
    .option('--json', 'print one JSON object')
    .action(async (options: { json?: boolean }) => {
      const store = await openCommandStore(io, loadConfig(io.env), { create: true });
      try {
        const applied = await store.migrate();
        const human = applied.length === 0 ? 'Database is up to date' : `Applied migrations: ${applied.join(', ')}`;
        print(io, options, { applied }, human);
      } finally {
        await store.close();
      }
    });
}
