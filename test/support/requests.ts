import type { FastifyInstance } from 'fastify';
import { bearer } from './app.js';

/** The paths as the spec spells them: a test that reached them through the app's own constants would follow a rename. */
const CONTACTS_PATH = '/api/v1/contacts';
const CHANGES_PATH = '/api/v1/contacts/changes';

type Headers = Record<string, string>;

/**
 * GET /api/v1/contacts through `inject`: `key` (an API key or an access token) as the bearer credential, none when
 * null; `query` is what follows the `?`, none when empty; `headers` are added and may replace the credential.
 */
export function listContacts(app: FastifyInstance, key: string | null, query = '', headers: Headers = {}) {
  return app.inject({ method: 'GET', url: target(CONTACTS_PATH, query), headers: credentialed(key, headers) });
}

/** GET /api/v1/contacts/changes through `inject`, sent as `listContacts` sends its request. */
export function listContactChanges(app: FastifyInstance, key: string | null, query = '', headers: Headers = {}) {
  return app.inject({ method: 'GET', url: target(CHANGES_PATH, query), headers: credentialed(key, headers) });
}

/** GET /api/v1/contacts from a listening server at `origin` (`http://host:port`), sent as `listContacts` sends it. */
export function fetchContacts(origin: string, key: string | null, query = '', headers: Headers = {}): Promise<Response> {
  return fetch(`${origin}${target(CONTACTS_PATH, query)}`, { headers: credentialed(key, headers) });
}

/** `headers` after the bearer header of `key` (none when null), so that they may replace it. */
export function credentialed(key: string | null, headers: Headers): Headers {
  return { ...(key === null ? {} : bearer(key)), ...headers };
}

function target(path: string, query: string): string {
  return query === '' ? path : `${path}?${query}`;
}
