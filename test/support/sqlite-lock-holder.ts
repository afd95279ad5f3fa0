import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** Opens the database, takes the write lock, says so, and commits when its stdin closes (or its parent dies). */
const HOLDER = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.exec('BEGIN IMMEDIATE');
process.stdout.write('locked\\n');
process.stdin.resume();
process.stdin.once('end', () => {
  db.exec('COMMIT');
  db.close();
});`;

export interface SqliteLockHolder {
  /** Commits and waits until the holding process has exited. */
  release(): Promise<void>;
}

/** Holds SQLite's write lock on the database at `path` from another process, as a running import does. */
export async function holdSqliteWriteLock(path: string): Promise<SqliteLockHolder> {
  const child = spawn(process.execPath, ['-e', HOLDER, path], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const [first] = await Promise.race([once(child.stdout!, 'data'), exited.then(() => [Buffer.from('exited')])]);
  if (String(first).trim() !== 'locked') throw new Error(`the lock holder did not take the lock: ${String(first)}`);
  return {
    async release() {
      child.stdin!.end();
      const [code] = await exited;
      if (code !== 0) throw new Error(`the lock holder exited with ${code}`);
    },
  };
}
