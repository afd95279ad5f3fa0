import type { ContactStore, Store } from '../../src/store/store.js';

/** Forwards to `target`, with methods bound, except for the ones `overrides` replaces. */
function overlay<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value = Reflect.get(object, property);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/** The real store with some behaviour replaced: a failing or slow query, an unreachable database. */
export function overrideStore(store: Store, overrides: { ping?: Store['ping']; contacts?: Partial<ContactStore> }): Store {
  const { contacts, ...rest } = overrides;
  return overlay(store, { ...rest, ...(contacts ? { contacts: overlay(store.contacts, contacts) } : {}) });
}
