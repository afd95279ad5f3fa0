import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { IMPORT_EXTENSIONS_TEXT } from '../../src/import/read-contacts.js';
import { cli, writeTempFile } from '../support/cli.js';

describe('the file types contacts import accepts', () => {
  it('are named alike by --help, docs/cli.md and the error for another type', async () => {
    expect(IMPORT_EXTENSIONS_TEXT).toBe('.json, .ndjson, .jsonl, .csv, .vcf or .vcard');
    const help = await cli('file:unused.db', 'contacts', 'import', '--help');
    expect(help.stdout).toContain(`import contacts from ${IMPORT_EXTENSIONS_TEXT}`);
    expect(readFileSync('docs/cli.md', 'utf8')).toContain(`imports ${IMPORT_EXTENSIONS_TEXT.replace(/(\.\w+)/g, '`$1`')}`);
    const file = writeTempFile('contacts.xlsx', 'x');
    const refused = await cli('file:unused.db', 'contacts', 'import', '--user', 'a@example.com', file);
    expect(refused.stderr).toBe(`error: cannot import ${file}: the file type must be ${IMPORT_EXTENSIONS_TEXT}\n`);
  });
});
