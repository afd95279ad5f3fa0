import { SERVICE_KEY_SECRET, ServiceKey } from '../domain/service-key.js';
import type { OAuthStore } from '../store/store.js';

/**
 * The service key, read from the database on first use and then kept: it never changes, so a request pays no
 * round trip for it. A failed read (the database down) is tried again at the next use.
 */
export interface ServiceKeySource {
  ready(): Promise<ServiceKey>;
  /** The key once read, so that a request after the first awaits nothing for it. */
  current(): ServiceKey | null;
}

export function serviceKeyFrom(secrets: Pick<OAuthStore, 'secret'>): ServiceKeySource {
  let loading: Promise<ServiceKey> | null = null;
  let loaded: ServiceKey | null = null;
  return {
    current: () => loaded,
    ready: () => {
      loading ??= secrets
        .secret(SERVICE_KEY_SECRET)
        .then((secret) => (loaded = new ServiceKey(secret)))
        .catch((error: unknown) => {
          loading = null;
          throw error;
        });
      return loading;
    },
  };
}
