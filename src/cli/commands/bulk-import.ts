import type { Command } from 'commander';
import { readOwnedContactsFile, readUsersFile } from '../../import/read-bulk-files.js';
import { bulkImport } from '../../operations/contacts.js';
import { withStore } from '../context.js';
import { print, type CliIo } from '../io.js';

export function registerBulkImportCommand(program: Command, io: CliIo): void {
  program
    .command('bulk-import')
    .description('load many users and their contacts from NDJSON in one transaction (migrations, benchmarks)')
    .option('--users <file>', 'NDJSON, one {"email","name","plan"} per line; existing emails are kept as they are')
    .requiredOption('--contacts <file>', 'NDJSON, one contact per line with "owner" (email or id); may carry "merged_into"')
    .option('--json', 'print one JSON object')
    .action(async (options: { users?: string; contacts: string; json?: boolean }) => {
      const users = options.users === undefined ? [] : await readUsersFile(options.users);
      const result = await withStore(io, (store) => bulkImport(store, { users, contacts: readOwnedContactsFile(options.contacts) }));
      print(io, options, result, `Created ${result.usersCreated} users and imported ${result.contacts} contacts`);
    });
}
