import { randomBytes } from 'node:crypto';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { InputError } from '../domain/errors.js';

const WRITE_PROBLEMS: Record<string, string> = {
  ENOENT: 'its directory does not exist',
  ENOTDIR: 'its directory does not exist',
  EACCES: 'permission denied',
  EROFS: 'the file system is read-only',
};

/**
 * Runs `produce` with a writer into a new temporary file in `path`'s directory, then renames it to `path`,
 * which appears complete or not at all. When `produce` fails (or is interrupted through its signal), the
 * temporary file is removed and whatever was at `path` stays as it was. The file is readable by its owner
 * only: it holds private contact data.
 */
export async function writeFileAtomically<T>(path: string, produce: (write: (text: string) => Promise<void>) => Promise<T>): Promise<T> {
  if ((await stat(path).catch(() => null))?.isDirectory()) throw new InputError(`cannot write ${path}: it is a directory`);
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', 0o600).catch((error: NodeJS.ErrnoException) => {
    throw new InputError(`cannot write ${path}: ${WRITE_PROBLEMS[error.code ?? ''] ?? error.message}`);
  });
  try {
    // writeFile writes all of the text from the current position, looping over partial writes.
    const result = await produce((text) => handle.writeFile(text, 'utf8'));
    await handle.sync();
    await handle.close();
    await rename(temporary, path);
    return result;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw error;
  }
}
