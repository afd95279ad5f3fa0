import { Option, type Command } from 'commander';
import { IMPORT_MATCH_TEXT, parseImportMatch, type ImportMatchField } from '../../domain/import-matching.js';
import { IMPORT_EXTENSIONS_TEXT, readContactsFile } from '../../import/read-contacts.js';
import { deleteContacts, importContacts, mergeContacts } from '../../operations/contacts.js';
import { withStore } from '../context.js';
import { importSummaryText } from '../import-summary.js';
import { plural, print, type CliIo } from '../io.js';

export function registerContactCommands(program: Command, io: CliIo): void {
  const contacts = program.command('contacts').description('import, merge and delete contacts');

  contacts
    .command('import')
    .description(`import contacts from ${IMPORT_EXTENSIONS_TEXT}; all or nothing`)
    .requiredOption('--user <email|id>', 'the contacts’ owner')
    .argument('<file>', 'the file to import')
    .addOption(
      new Option(
        '--match <fields>',
        `the fields on which a record without id updates the contact with the same value instead of creating one: ${IMPORT_MATCH_TEXT}; ` +
          'by default linkedin_url for a LinkedIn export, none for other files',
      ).argParser((text) => parseImportMatch(text, '--match')),
    )
    .addOption(new Option('--match-email', 'the same as --match email').conflicts('match'))
    .option('--json', 'print one JSON object')
    .action(async (file: string, options: { user: string; match?: ImportMatchField[]; matchEmail?: boolean; json?: boolean }) => {
      // Read as the import goes, a batch at a time; an operator's file takes no record cap (ADMIN_IMPORT_MAX_RECORDS).
      const contactsFile = readContactsFile(file);
      const match = options.matchEmail === true ? (['email'] as const) : options.match;
      const summary = await withStore(io, (store) => importContacts(store, { user: options.user, file: contactsFile, match }));
      print(io, options, summary, importSummaryText(summary));
    });

  contacts
    .command('merge')
    .description('soft-merge a duplicate contact into the one that survives')
    .requiredOption('--user <email|id>', 'the contacts’ owner')
    .argument('<duplicate-id>', 'the contact that disappears from listings')
    .requiredOption('--into <survivor-id>', 'the contact that stays')
    .option('--json', 'print one JSON object')
    .action(async (duplicateId: string, options: { user: string; into: string; json?: boolean }) => {
      await withStore(io, (store) => mergeContacts(store, { user: options.user, duplicateId, survivorId: options.into }));
      print(io, options, { merged: duplicateId, into: options.into }, `Merged ${duplicateId} into ${options.into}`);
    });

  contacts
    .command('delete')
    .description('delete contacts, with the duplicates merged into them; all or nothing')
    .requiredOption('--user <email|id>', 'the contacts’ owner')
    .argument('<contact-id...>', 'the contacts to delete')
    .option('--json', 'print one JSON object')
    .action(async (ids: string[], options: { user: string; json?: boolean }) => {
      const deleted = await withStore(io, (store) => deleteContacts(store, { user: options.user, ids }));
      print(io, options, { deleted }, `Deleted ${plural(deleted, 'contact')}`);
    });
}
