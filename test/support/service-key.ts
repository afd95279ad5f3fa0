import { SERVICE_KEY_SECRET, ServiceKey } from '../../src/domain/service-key.js';
import type { Store } from '../../src/store/store.js';

/** The database's service key, as the server reads it: what a test needs to craft a token the server accepts. */
export async function serviceKeyOf(store: Store): Promise<ServiceKey> {
  return new ServiceKey(await store.oauth.secret(SERVICE_KEY_SECRET));
}
