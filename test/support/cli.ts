import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { runCli } from '../../src/cli/program.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process with its own environment, capturing what it prints. */
export async function cli(databaseUrl: string, ...args: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: { DATABASE_URL: databaseUrl, API_KEY_PREFIX: 'cnt' },
  });
  return { code, stdout, stderr };
}

/** Runs a CLI command that must succeed with --json and returns its one JSON object. */
export async function cliJson<T = any>(databaseUrl: string, ...args: string[]): Promise<T> {
  const result = await cli(databaseUrl, ...args, '--json');
  if (result.code !== 0) throw new Error(`contacts-api ${args.join(' ')} failed: ${result.stderr}`);
  const lines = result.stdout.trim().split('\n');
  if (lines.length !== 1) throw new Error(`expected one JSON line, got: ${result.stdout}`);
  return JSON.parse(lines[0]!) as T;
}

export const BIN = resolve('dist/cli/main.js');

/** The whole environment of `contacts-api mcp` as an agent's config gives it: nothing inherited but PATH. */
export function mcpEnv(databaseUrl: string, key: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
    API_KEY_PREFIX: 'cnt',
    CONTACTS_API_KEY: key,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** Runs the built `contacts-api` bin as a separate process, as a user would. */
export async function runBin(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` (npm test does it)`);
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

export function writeTempFile(name: string, content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'contacts-api-cli-')), name);
  writeFileSync(path, content);
  return path;
}
