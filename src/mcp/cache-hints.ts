import type { CacheHint } from '@modelcontextprotocol/server';

const HOUR_MS = 60 * 60 * 1000;

/**
 * The cache hints 2026-07-28 list and read results carry (`ttlMs`, `cacheScope`; 2025 answers never do), chosen per
 * list. The tool list, the resource templates and what server/discover tells are the same for every caller and change
 * only with a release: any cache may keep them an hour. A contact's resource and the resource list hold the owner's
 * contacts, which an import changes at any time: private, and a minute.
 */
export const MCP_CACHE_HINTS = {
  'server/discover': { ttlMs: HOUR_MS, cacheScope: 'public' },
  'tools/list': { ttlMs: HOUR_MS, cacheScope: 'public' },
  'resources/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: HOUR_MS, cacheScope: 'public' },
  'resources/read': { ttlMs: 60_000, cacheScope: 'private' },
} as const satisfies Record<string, Required<CacheHint>>;

/** The contact cards page: the same bytes for every caller until the next release (240 KB a host need not fetch again). */
export const CARDS_PAGE_CACHE_HINT = { ttlMs: HOUR_MS, cacheScope: 'public' } as const satisfies Required<CacheHint>;
