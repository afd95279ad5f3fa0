#!/usr/bin/env node
import { runCli } from './program.js';

let stdoutWatched = false;
/**
 * Writes a command's output. process.stdout is opened only here, on first use: opening it turns an inherited pipe
 * back to blocking, which `serve` (whose log writes to stdout without blocking) must never have done.
 */
function writeStdout(text: string): void {
  if (!stdoutWatched) {
    stdoutWatched = true;
    // A reader that stops early (`contacts-api export | head`) closes the pipe: stop quietly, as a Unix filter does.
    process.stdout.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      process.exit(0);
    });
  }
  process.stdout.write(text);
}

// A closed stderr (its reader went away) must not crash a server that only announces itself there.
process.stderr.on('error', () => undefined);

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: writeStdout,
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  stderrIsTTY: process.stderr.isTTY === true,
});
