import { Option, type Command } from 'commander';
import { ContactsClient } from 'contacts-read-api-client';
import { InputError } from '../../domain/errors.js';
import { EXPORT_FORMAT_NAMES, type ExportFormatName } from '../../export/export-format.js';
import { exportContacts } from '../../operations/exports.js';
import { plural, type CliIo } from '../io.js';
import { createProgressBar } from '../progress-bar.js';

interface ExportOptions {
  baseUrl: string;
  format: ExportFormatName;
  out?: string;
}

export function registerExportCommand(program: Command, io: CliIo): void {
  program
    .command('export')
    .description('export every contact of the API key’s user from a running API; the key is read from CONTACTS_API_KEY')
    .requiredOption('--base-url <url>', 'where the API is served, e.g. http://127.0.0.1:3000')
    .addOption(new Option('--format <format>', 'output format').choices(EXPORT_FORMAT_NAMES).default('ndjson'))
    .option('--out <file>', 'write to this file, which appears only once the export is complete (default: stdout)')
    .action((options: ExportOptions) => exportFromApi(io, options));
}

/**
 * Walks every contact through the typed client (retries, exactly-once paging) into the chosen format.
 * A progress bar goes to stderr only when it is a terminal; otherwise stderr gets one summary line.
 * SIGINT and SIGTERM stop the walk; with --out, a failed or stopped export leaves no file behind.
 */
async function exportFromApi(io: CliIo, options: ExportOptions): Promise<void> {
  const apiKey = io.env.CONTACTS_API_KEY?.trim();
  if (!apiKey) throw new InputError('CONTACTS_API_KEY is not set; export sends it to the API as the key');
  const client = createClient(options.baseUrl, apiKey);
  const progress = io.stderrIsTTY ? createProgressBar(io.stderr) : null;
  const started = Date.now();
  const interruption = new AbortController();
  const interrupt = (signal: NodeJS.Signals) => interruption.abort(new Error(`interrupted by ${signal}`));
  process.once('SIGINT', interrupt).once('SIGTERM', interrupt);
  try {
    const contacts = client.contacts({ signal: interruption.signal, onPage: ({ total }) => progress?.setTotal(total) });
    const target = options.out === undefined ? { write: io.stdout } : { file: options.out };
    const count = await exportContacts(contacts, options.format, target, (done) => progress?.update(done));
    progress?.finish(count);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    io.stderr(`Exported ${plural(count, 'contact')} as ${options.format} to ${options.out ?? 'stdout'} in ${seconds}s\n`);
  } catch (error) {
    if (progress) io.stderr('\n');
    if (error instanceof InputError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`export failed: ${reason}${options.out === undefined ? '' : ` (${options.out} not written)`}`, { cause: error });
  } finally {
    process.off('SIGINT', interrupt).off('SIGTERM', interrupt);
  }
}

function createClient(baseUrl: string, apiKey: string): ContactsClient {
  try {
    return new ContactsClient({ baseUrl, apiKey });
  } catch {
    throw new InputError(`--base-url must be an http or https URL such as http://127.0.0.1:3000; got "${baseUrl}"`);
  }
}
