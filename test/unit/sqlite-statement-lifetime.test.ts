import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SQLITE_STORE = resolve(import.meta.dirname, '../../src/store/sqlite');

/**
 * better-sqlite3 12 on Node 24.19+ aborts the process when the garbage collector frees one of its statements from a
 * timer or idle task (src/store/sqlite/statements.ts): a statement made outside StatementCache, or by `pragma()`,
 * becomes garbage after its one use.
 */
describe('the SQLite store never leaves a better-sqlite3 statement to the garbage collector', () => {
  it('prepares statements only in StatementCache and never calls pragma()', () => {
    const offenders: string[] = [];
    for (const name of readdirSync(SQLITE_STORE).filter((file) => file.endsWith('.ts'))) {
      const lines = readFileSync(join(SQLITE_STORE, name), 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (/\.(prepare|pragma)\(/.test(line) && !(name === 'statements.ts' && line.includes('this.db.prepare(sql)'))) {
          offenders.push(`${name}:${index + 1}: ${line.trim()}`);
        }
      });
    }
    expect(offenders).toEqual([]);
  });

  it('keeps every database it opens', () => {
    const connection = readFileSync(join(SQLITE_STORE, 'connection.ts'), 'utf8');
    expect(connection).toMatch(/keptForLife\(new Database\(/);
    expect(connection.match(/new Database\(/g)).toHaveLength(1);
  });
});
