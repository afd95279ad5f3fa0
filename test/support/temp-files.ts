import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** A fresh temporary directory for the test file's lifetime; the returned function writes a file into it. */
export function useTempFiles(): (name: string, content: string | Uint8Array) => Promise<string> {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'contacts-import-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  return async (name, content) => {
    const path = join(dir, name);
    await writeFile(path, content);
    return path;
  };
}
