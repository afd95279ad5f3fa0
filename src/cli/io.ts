/** Where a command writes and what environment it reads; the bin passes the process's, tests their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  /** True when stderr is a terminal: progress displays draw only then. */
  stderrIsTTY?: boolean;
}

/** Prints one JSON object with --json, else the human text. */
export function print(io: CliIo, options: { json?: boolean }, value: object, human: string): void {
  io.stdout(options.json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

/** `1 contact`, `2 contacts`. */
export function plural(count: number, noun: string): string {
  return `${count} ${oneOrMany(count, noun, `${noun}s`)}`;
}

/** `one` for a count of 1, else `many`: words that agree with a number (`became a new contact`, `new contacts`). */
export function oneOrMany(count: number, one: string, many: string): string {
  return count === 1 ? one : many;
}
