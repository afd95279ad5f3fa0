import { openStore } from '../src/store/open-store.js';
import { parseDatabaseUrl } from '../src/domain/database-url.js';

export interface DeepRead {
  /** The whole read of a page near the end of the big network, sort keys included. */
  readMs: number;
  /** The longest the event loop went without running a 1 ms timer meanwhile. */
  longestBlockMs: number;
}

/** Fresh stores measured; the median is reported. */
export const DEEP_READ_RUNS = 3;

/**
 * The first deep read after a write, as a fresh store makes it (no sort keys remembered), in the bench's own process:
 * how long it takes, and how long at most it holds the event loop. The median of DEEP_READ_RUNS fresh stores.
 */
export async function measureDeepRead(databaseUrl: string, ownerEmail: string): Promise<DeepRead> {
  const runs: DeepRead[] = [];
  for (let run = 0; run < DEEP_READ_RUNS; run += 1) runs.push(await deepReadOnce(databaseUrl, ownerEmail));
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return { readMs: median(runs.map((r) => r.readMs)), longestBlockMs: median(runs.map((r) => r.longestBlockMs)) };
}

async function deepReadOnce(databaseUrl: string, ownerEmail: string): Promise<DeepRead> {
  const store = await openStore(parseDatabaseUrl(databaseUrl));
  try {
    const owner = await store.users.find(ownerEmail);
    if (owner === null) throw new Error(`no user ${ownerEmail}`);
    const { total } = await store.contacts.listPageJson(owner.id, { limit: 1, offset: 0 });
    let last = performance.now();
    let longestBlockMs = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestBlockMs = Math.max(longestBlockMs, now - last);
      last = now;
    }, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    await store.contacts.listPageJson(owner.id, { limit: 100, offset: Math.max(0, total - 150) });
    const readMs = performance.now() - started;
    // The tick after the read shows a block that lasted to its end.
    await new Promise((resolve) => setTimeout(resolve, 5));
    clearInterval(ticker);
    return { readMs, longestBlockMs };
  } finally {
    await store.close();
  }
}
