import { readFileSync } from 'node:fs';
import { Command, CommanderError, Help, type Option } from 'commander';
import { ConfigError } from '../config.js';
import { PublicError } from '../domain/errors.js';
import { registerBulkImportCommand } from './commands/bulk-import.js';
import { registerContactCommands } from './commands/contacts.js';
import { registerDemoCommand } from './commands/demo.js';
import { registerExportCommand } from './commands/export.js';
import { registerKeyCommands } from './commands/keys.js';
import { registerMcpCommand } from './commands/mcp.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerServeCommand } from './commands/serve.js';
import { registerUserCommands } from './commands/users.js';
import type { CliIo } from './io.js';

export function createProgram(io: CliIo): Command {
  const program = new Command('contacts-read-api')
    .description('Contacts Read API: serve the API and administer users, keys and contacts')
    .version(packageVersion(), '-V, --version', 'print the version')
    .configureHelp({ optionDescription: describeOption })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  registerServeCommand(program, io);
  registerMigrateCommand(program, io);
  registerUserCommands(program, io);
  registerKeyCommands(program, io);
  registerContactCommands(program, io);
  registerBulkImportCommand(program, io);
  registerDemoCommand(program, io);
  registerExportCommand(program, io);
  registerMcpCommand(program, io);
  for (const command of program.commands) {
    command.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
    for (const sub of command.commands) sub.exitOverride().configureOutput({ writeOut: io.stdout, writeErr: io.stderr });
  }
  return program;
}

/** The version in package.json, the same from src/ (tests) and dist/ (the bin). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** Commander's description of an option, with `(required)` for an option the command cannot run without. */
function describeOption(this: Help, option: Option): string {
  const description = Help.prototype.optionDescription.call(this, option);
  return option.mandatory ? `${description} (required)` : description;
}

/** Runs the CLI and returns its exit code; every failure is one line on stderr, never a stack. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    await createProgram(io).parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    io.stderr(`error: ${describeFailure(error)}\n`);
    return 1;
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof PublicError || error instanceof ConfigError) return error.message;
  // The operator running a command may see what failed inside (a database error, a file system error): its first line.
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n', 1)[0]!;
}
