/**
 * The bytes the ceilings send: the service's own hot first page, fetched from it as it is, in gzip and in Brotli, and
 * saved under .bench. The service keeps a page in gzip first and in Brotli once it is hot (src/http/page-compression.ts),
 * so the Brotli bytes are fetched after reading the page often enough for that.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from './databases.js';
import { getBytes } from './listing-rows.js';
import type { Coding } from './report.js';
import { sleep } from './server-under-test.js';

const FIRST_PAGE = '/api/v1/contacts?limit=50&offset=0';
/** Reads before the Brotli bytes are taken: past the service's HOT_READS (16). */
const HOT_PAGE_READS = 40;

export type CeilingPages = Record<Coding, string> & { sizes: Record<Coding, number> };

export async function saveCeilingPages(
  work: string,
  db: Database,
  withService: (action: () => Promise<void>) => Promise<void>,
  port: number,
  log: (message: string) => void,
): Promise<CeilingPages> {
  const files = { identity: join(work, 'first-page.json'), gzip: join(work, 'first-page.json.gz'), br: join(work, 'first-page.json.br') };
  const sizes = { identity: 0, gzip: 0, br: 0 };
  const fetchAs = async (coding: Coding) => {
    const headers: Record<string, string> = { authorization: `Bearer ${db.bigKey}` };
    if (coding !== 'identity') headers['accept-encoding'] = coding === 'gzip' ? 'gzip' : 'gzip, br';
    const answer = await getBytes(port, FIRST_PAGE, headers);
    if (answer.status !== 200) throw new Error(`GET ${FIRST_PAGE}: ${answer.status}`);
    return { encoding: answer.headers['content-encoding'] ?? 'identity', body: answer.body };
  };
  await withService(async () => {
    for (const coding of ['identity', 'gzip', 'br'] as Coding[]) {
      if (coding === 'br') {
        for (let read = 0; read < HOT_PAGE_READS; read += 1) await fetchAs('br');
        // The Brotli copy is made off the request path.
        await sleep(500);
      }
      const { encoding, body } = await fetchAs(coding);
      if (encoding !== coding) log(`warning: the service sent its first page in ${encoding} when asked for ${coding}`);
      writeFileSync(files[coding], body);
      sizes[coding] = body.length;
    }
  });
  return { ...files, sizes };
}
