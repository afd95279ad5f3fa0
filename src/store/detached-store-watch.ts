import type { Store } from './store.js';

/** How often a server checks that its store still reads the database its configuration names: one stat call. */
export const DETACHED_CHECK_MS = 1_000;

/**
 * Calls `onDetached` once, with the reason, when the store stops reading the database its configuration names
 * (Store.detachedReason: a SQLite file deleted, moved away or replaced). Returns a function that stops watching.
 */
export function watchForDetachedStore(store: Pick<Store, 'detachedReason'>, onDetached: (reason: string) => void): () => void {
  const detachedReason = store.detachedReason?.bind(store);
  if (detachedReason === undefined) return () => undefined;
  const timer = setInterval(() => {
    const reason = detachedReason();
    if (reason === null) return;
    clearInterval(timer);
    onDetached(reason);
  }, DETACHED_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
