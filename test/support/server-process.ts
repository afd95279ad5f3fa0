import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { BIN } from './cli.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote so far: its start-up lines (stderr) and its JSON log (stdout). */
  output(): string;
  /** The JSON log lines (stdout) written so far, parsed. */
  logLines(): Record<string, any>[];
  /** Everything written to stdout so far, as written. */
  stdout(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  /** Kills the process if it still runs (cleanup). */
  kill(): Promise<void>;
}

/** Starts `contacts-api serve --port 0` (or `port`) as its own process and waits until it listens. */
export function startServerProcess(env: NodeJS.ProcessEnv, port = 0): Promise<ServerProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
    env: { ...process.env, API_KEY_PREFIX: 'cnt', WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return watchServer(child, () => child.kill('SIGKILL'));
}

/**
 * Runs `npm start` (the demo, then `serve`) as a terminal runs it: in a process group of its own, where a Ctrl-C
 * (`ctrlC()`) reaches npm, the server and its workers at once. Resolves once a server process listens.
 */
export async function startWithNpmStart(env: NodeJS.ProcessEnv): Promise<ServerProcess & { ctrlC(): void }> {
  const child = spawn('npm', ['start'], {
    env: { ...process.env, API_KEY_PREFIX: 'cnt', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group has exited
    }
  };
  return { ...(await watchServer(child, () => signalGroup('SIGKILL'))), ctrlC: () => signalGroup('SIGINT') };
}

async function watchServer(child: ChildProcess, killAll: () => void): Promise<ServerProcess> {
  let output = '';
  let log = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (process.env.DEBUG_SERVE) process.stdout.write(chunk);
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    log += chunk.toString();
    collect(chunk);
  });
  child.stderr!.on('data', collect);
  // 'close' rather than 'exit': it comes once the output pipes are drained, so every log line is in.
  const exited = once(child, 'close').then(([code]) => code as number | null);
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
  return {
    child,
    url,
    output: () => output,
    stdout: () => log,
    logLines: () =>
      log
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>),
    exited,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        killAll();
        await exited;
      }
    },
  };
}
