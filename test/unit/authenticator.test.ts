import { describe, expect, it, vi } from 'vitest';
import {
  AuthError,
  INVALID_KEY_MESSAGE,
  LAST_USED_RESOLUTION_MS,
  PRO_PLAN_REQUIRED_MESSAGE,
  createAuthenticator,
  extractBearerToken,
  type AuthenticatorOptions,
} from '../../src/auth/authenticator.js';
import { generateApiKey, hashApiKey } from '../../src/domain/api-key.js';
import type { BillingPlan } from '../../src/domain/billing-plan.js';
import type { Scope } from '../../src/domain/scopes.js';
import type { ApiKeyRecord, KeyStore, KeyWithOwner } from '../../src/store/store.js';
import { rejection } from '../support/thrown.js';

const PREFIX = 'cnt';
const NOW = Date.parse('2024-05-01T12:00:00.000Z');
const OWNER_ID = '0190a3c4-0000-7000-8000-00000000000a';
const KEY_ID = '0190a3c4-0000-7000-8000-0000000000aa';
const READ: Scope = 'contacts:read';

interface TouchCall {
  keyId: string;
  usedAt: string;
  unlessUsedAfter: string;
}

/** An in-memory KeyStore holding one key by the hash of its token; records lookups and touches. */
class FakeKeyStore implements KeyStore {
  readonly lookups: string[] = [];
  readonly touches: TouchCall[] = [];
  touchResult: () => Promise<void> = () => Promise.resolve();
  private readonly byHash = new Map<string, KeyWithOwner>();

  add(token: string, key: Partial<ApiKeyRecord> = {}, ownerPlan: BillingPlan = 'pro'): void {
    this.byHash.set(hashApiKey(token), {
      key: {
        id: KEY_ID,
        owner_id: OWNER_ID,
        start: null,
        label: null,
        scopes: [READ],
        created_at: '2024-01-01T00:00:00.000Z',
        expires_at: null,
        last_used_at: null,
        revoked_at: null,
        ...key,
      },
      ownerPlan,
    });
  }

  async findByHash(secretHash: string): Promise<KeyWithOwner | null> {
    this.lookups.push(secretHash);
    return this.byHash.get(secretHash) ?? null;
  }

  async findById(keyId: string): Promise<KeyWithOwner | null> {
    return [...this.byHash.values()].find(({ key }) => key.id === keyId) ?? null;
  }

  touch(keyId: string, usedAt: string, unlessUsedAfter: string): Promise<void> {
    this.touches.push({ keyId, usedAt, unlessUsedAfter });
    return this.touchResult();
  }

  create(): never {
    throw new Error('not used by the authenticator');
  }

  listForOwner(): never {
    throw new Error('not used by the authenticator');
  }

  revoke(): never {
    throw new Error('not used by the authenticator');
  }

  rotate(): never {
    throw new Error('not used by the authenticator');
  }
}

function setup(options: Partial<AuthenticatorOptions> = {}) {
  const keys = new FakeKeyStore();
  const token = generateApiKey(PREFIX);
  const auth = createAuthenticator({ keys, apiKeyPrefix: PREFIX, now: () => NOW, ...options });
  return { keys, token, auth, header: `Bearer ${token}` };
}

async function expectAuthError(promise: Promise<unknown>, status: 401 | 403, message: string): Promise<void> {
  const error = await rejection(promise, AuthError);
  expect({ status: error.status, message: error.message }).toEqual({ status, message });
}

/** Lets the authenticator's fire-and-forget touch settle. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('extractBearerToken', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER abc', 'abc'],
    ['bEaReR abc', 'abc'],
    ['Bearer  abc', 'abc'],
    ['Bearer\tabc', 'abc'],
    ['Bearer \t abc', 'abc'],
    ['Bearer abc ', 'abc'],
    ['Bearer abc\t', 'abc'],
    ['Bearer cnt_live_0123456789ABCDEFabcdef', 'cnt_live_0123456789ABCDEFabcdef'],
    ['Bearer a.b-c_d~e+f/g=', 'a.b-c_d~e+f/g='],
  ])('reads %j as %j', (header, token) => {
    expect(extractBearerToken(header)).toBe(token);
  });

  it.each([
    ['undefined', undefined],
    ['empty', ''],
    ['only the scheme', 'Bearer'],
    ['the scheme and a space', 'Bearer '],
    ['the scheme and tabs', 'Bearer\t\t'],
    ['two tokens', 'Bearer abc def'],
    ['two tokens separated by a tab', 'Bearer abc\tdef'],
    ['no separator', 'Bearerabc'],
    ['a comma separator', 'Bearer,abc'],
    ['the Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['the Token scheme', 'Token abc'],
    ['the Digest scheme', 'Digest username="a"'],
    ['a bare token', 'abc'],
    ['a bare key', 'cnt_live_abc'],
    ['a leading space', ' Bearer abc'],
    ['a newline separator', 'Bearer\nabc'],
    ['a trailing newline', 'Bearer abc\n'],
    ['a misspelt scheme', 'Baerer abc'],
    ['a longer scheme', 'Bearers abc'],
  ])('gives null for %s', (_label, header) => {
    expect(extractBearerToken(header)).toBeNull();
  });
});

describe('createAuthenticator success', () => {
  it('resolves a valid Pro key with contacts:read to its owner and key', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token);
    await expect(auth.authenticate(header, READ)).resolves.toStrictEqual({ ownerId: OWNER_ID, keyId: KEY_ID });
  });

  it('looks the key up by the SHA-256 hex of the token, never the token itself', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token);
    await auth.authenticate(header, READ);
    expect(keys.lookups).toEqual([hashApiKey(token)]);
    expect(keys.lookups).not.toContain(token);
  });

  it('accepts a lowercase scheme and extra whitespace', async () => {
    const { keys, token, auth } = setup();
    keys.add(token);
    await expect(auth.authenticate(`bearer \t${token}\t`, READ)).resolves.toStrictEqual({
      ownerId: OWNER_ID,
      keyId: KEY_ID,
    });
  });

  it('accepts a key that expires one millisecond after now', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { expires_at: new Date(NOW + 1).toISOString() });
    await expect(auth.authenticate(header, READ)).resolves.toMatchObject({ keyId: KEY_ID });
  });
});

describe('createAuthenticator 401: missing, malformed, unknown or inactive key', () => {
  it('sets the message to the spec text', () => {
    expect(INVALID_KEY_MESSAGE).toBe('Invalid or inactive API key');
  });

  it.each([
    ['no Authorization header', undefined],
    ['an empty header', ''],
    ['Bearer without a token', 'Bearer '],
    ['a Basic header', 'Basic dXNlcjpwYXNz'],
    ['a malformed token', 'Bearer not-a-key'],
    ['a key of another prefix', `Bearer ${generateApiKey('other')}`],
  ])('refuses %s with 401, without a database lookup', async (_label, header) => {
    const { keys, auth } = setup();
    await expectAuthError(auth.authenticate(header, READ), 401, 'Invalid or inactive API key');
    expect(keys.lookups).toEqual([]);
  });

  it('refuses a key whose checksum fails with 401, without a database lookup', async () => {
    const { keys, token, auth } = setup();
    keys.add(token);
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    await expectAuthError(auth.authenticate(`Bearer ${token.slice(0, -1)}${last}`, READ), 401, INVALID_KEY_MESSAGE);
    expect(keys.lookups).toEqual([]);
  });

  it('refuses a key in the Authorization header given twice (two tokens) with 401', async () => {
    const { keys, token, auth } = setup();
    keys.add(token);
    await expectAuthError(auth.authenticate(`Bearer ${token} ${token}`, READ), 401, INVALID_KEY_MESSAGE);
  });

  it('refuses a well-formed key that is unknown with 401', async () => {
    const { keys, auth, header } = setup();
    await expectAuthError(auth.authenticate(header, READ), 401, INVALID_KEY_MESSAGE);
    expect(keys.lookups).toHaveLength(1);
  });

  it('refuses a revoked key with 401', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { revoked_at: '2024-04-01T00:00:00.000Z' });
    await expectAuthError(auth.authenticate(header, READ), 401, INVALID_KEY_MESSAGE);
  });

  it('refuses a key revoked in the future too (revoked_at set means revoked)', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { revoked_at: new Date(NOW + 3_600_000).toISOString() });
    await expectAuthError(auth.authenticate(header, READ), 401, INVALID_KEY_MESSAGE);
  });

  it('refuses a key that expires at exactly now with 401', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { expires_at: new Date(NOW).toISOString() });
    await expectAuthError(auth.authenticate(header, READ), 401, INVALID_KEY_MESSAGE);
  });

  it('refuses a key that expired before now with 401', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { expires_at: new Date(NOW - 1).toISOString() });
    await expectAuthError(auth.authenticate(header, READ), 401, INVALID_KEY_MESSAGE);
  });

  it('reports an inactive key as 401 even when it also lacks the scope and the plan (401 first)', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { revoked_at: '2024-04-01T00:00:00.000Z', scopes: [] }, 'free');
    await expectAuthError(auth.authenticate(header, READ), 401, INVALID_KEY_MESSAGE);
  });

  it('never records use of a refused key', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { revoked_at: '2024-04-01T00:00:00.000Z' });
    await rejection(auth.authenticate(header, READ), AuthError);
    await settle();
    expect(keys.touches).toEqual([]);
  });
});

describe('createAuthenticator 403: valid key not allowed', () => {
  it('refuses a key without contacts:read with 403 "API key lacks contacts:read"', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { scopes: [] });
    await expectAuthError(auth.authenticate(header, READ), 403, 'API key lacks contacts:read');
  });

  it('refuses a Pro key of a free-plan owner with 403 "API access requires a Pro plan"', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, {}, 'free');
    await expectAuthError(auth.authenticate(header, READ), 403, 'API access requires a Pro plan');
    expect(PRO_PLAN_REQUIRED_MESSAGE).toBe('API access requires a Pro plan');
  });

  it('reports the missing scope before the plan', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { scopes: [] }, 'free');
    await expectAuthError(auth.authenticate(header, READ), 403, 'API key lacks contacts:read');
  });

  it('never records use of a key refused with 403', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, {}, 'free');
    await rejection(auth.authenticate(header, READ), AuthError);
    await settle();
    expect(keys.touches).toEqual([]);
  });
});

describe('createAuthenticator last_used_at', () => {
  it('writes at most once a minute', () => {
    expect(LAST_USED_RESOLUTION_MS).toBe(60_000);
  });

  it('touches a key never used before, with now and a cutoff one minute earlier', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { last_used_at: null });
    await auth.authenticate(header, READ);
    expect(keys.touches).toEqual([{ keyId: KEY_ID, usedAt: '2024-05-01T12:00:00.000Z', unlessUsedAfter: '2024-05-01T11:59:00.000Z' }]);
  });

  it('touches a key last used more than a minute ago', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { last_used_at: new Date(NOW - 60_001).toISOString() });
    await auth.authenticate(header, READ);
    expect(keys.touches).toHaveLength(1);
  });

  it('touches a key last used exactly a minute ago (the cutoff is not "after")', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { last_used_at: new Date(NOW - 60_000).toISOString() });
    await auth.authenticate(header, READ);
    expect(keys.touches).toHaveLength(1);
  });

  it('does not touch a key last used less than a minute ago', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token, { last_used_at: new Date(NOW - 59_999).toISOString() });
    await auth.authenticate(header, READ);
    await settle();
    expect(keys.touches).toEqual([]);
  });

  it('does not touch a key last used just now or (clock skew) in the future', async () => {
    for (const offset of [0, 5_000]) {
      const { keys, token, auth, header } = setup();
      keys.add(token, { last_used_at: new Date(NOW + offset).toISOString() });
      await auth.authenticate(header, READ);
      await settle();
      expect(keys.touches, `offset ${offset}`).toEqual([]);
    }
  });

  it('reads the clock from the now option for every request', async () => {
    let clock = NOW;
    const { keys, token, auth, header } = setup({ now: () => clock });
    keys.add(token, { last_used_at: new Date(NOW).toISOString() });
    await auth.authenticate(header, READ);
    expect(keys.touches).toHaveLength(0);
    clock = NOW + 60_000;
    await auth.authenticate(header, READ);
    expect(keys.touches).toEqual([{ keyId: KEY_ID, usedAt: '2024-05-01T12:01:00.000Z', unlessUsedAfter: '2024-05-01T12:00:00.000Z' }]);
  });

  it('judges expiry by the now option, not the wall clock', async () => {
    const { keys, token, auth, header } = setup({ now: () => Date.parse('2000-01-01T00:00:00.000Z') });
    keys.add(token, { expires_at: '2001-01-01T00:00:00.000Z' });
    await expect(auth.authenticate(header, READ)).resolves.toMatchObject({ ownerId: OWNER_ID });
  });

  it('does not fail the request when touch rejects, and passes the error to onTouchError', async () => {
    const failure = new Error('database is read-only');
    const onTouchError = vi.fn();
    const { keys, token, auth, header } = setup({ onTouchError });
    keys.add(token);
    keys.touchResult = () => Promise.reject(failure);
    await expect(auth.authenticate(header, READ)).resolves.toStrictEqual({ ownerId: OWNER_ID, keyId: KEY_ID });
    await settle();
    expect(onTouchError).toHaveBeenCalledTimes(1);
    expect(onTouchError).toHaveBeenCalledWith(failure);
  });

  it('swallows a touch failure without onTouchError (no unhandled rejection)', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token);
    keys.touchResult = () => Promise.reject(new Error('boom'));
    await expect(auth.authenticate(header, READ)).resolves.toMatchObject({ keyId: KEY_ID });
    await settle();
  });

  it('does not wait for touch to finish', async () => {
    const { keys, token, auth, header } = setup();
    keys.add(token);
    keys.touchResult = () => new Promise<void>(() => undefined);
    await expect(auth.authenticate(header, READ)).resolves.toMatchObject({ keyId: KEY_ID });
    expect(keys.touches).toHaveLength(1);
  });

  it('does not call onTouchError when touch succeeds', async () => {
    const onTouchError = vi.fn();
    const { keys, token, auth, header } = setup({ onTouchError });
    keys.add(token);
    await auth.authenticate(header, READ);
    await settle();
    expect(keys.touches).toHaveLength(1);
    expect(onTouchError).not.toHaveBeenCalled();
  });
});

describe('createAuthenticator key cache (bounded staleness)', () => {
  function cachedSetup(ttl: number) {
    let now = NOW;
    const keys = new FakeKeyStore();
    const token = generateApiKey(PREFIX);
    const auth = createAuthenticator({ keys, apiKeyPrefix: PREFIX, now: () => now, cacheTtlMs: ttl });
    return { keys, token, auth, header: `Bearer ${token}`, advance: (ms: number) => (now += ms) };
  }

  it('looks a key up once per TTL, then again', async () => {
    const { keys, token, auth, header, advance } = cachedSetup(500);
    keys.add(token);
    await auth.authenticate(header, READ);
    advance(499);
    await auth.authenticate(header, READ);
    expect(keys.lookups).toHaveLength(1);
    advance(1);
    await auth.authenticate(header, READ);
    expect(keys.lookups).toHaveLength(2);
  });

  it('sees a revocation once the TTL has passed, never later', async () => {
    const { keys, token, auth, header, advance } = cachedSetup(500);
    keys.add(token);
    await auth.authenticate(header, READ);
    keys.add(token, { revoked_at: new Date(NOW).toISOString() });
    advance(500);
    await expectAuthError(auth.authenticate(header, READ), 401, 'Invalid or inactive API key');
  });

  it('caches an unknown key too, so guessing costs the database nothing within the TTL', async () => {
    const { keys, auth, advance } = cachedSetup(500);
    const unknown = `Bearer ${generateApiKey(PREFIX)}`;
    await expectAuthError(auth.authenticate(unknown, READ), 401, 'Invalid or inactive API key');
    advance(100);
    await expectAuthError(auth.authenticate(unknown, READ), 401, 'Invalid or inactive API key');
    expect(keys.lookups).toHaveLength(1);
  });

  it('with TTL 0, looks the key up on every request', async () => {
    const { keys, token, auth, header } = cachedSetup(0);
    keys.add(token);
    await auth.authenticate(header, READ);
    await auth.authenticate(header, READ);
    expect(keys.lookups).toHaveLength(2);
  });

  it('still records use at most once a minute although the cached last_used_at is stale', async () => {
    const { keys, token, auth, header, advance } = cachedSetup(500);
    keys.add(token, { last_used_at: null });
    await auth.authenticate(header, READ);
    advance(200);
    await auth.authenticate(header, READ);
    advance(1000);
    await auth.authenticate(header, READ);
    expect(keys.touches).toHaveLength(1);
    advance(60_000);
    await auth.authenticate(header, READ);
    expect(keys.touches).toHaveLength(2);
  });
});

describe('AuthError', () => {
  it('carries its status, message and internal reason and is named AuthError', () => {
    const error = new AuthError(403, 'API key lacks contacts:read', 'scope');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('AuthError');
    expect(error.status).toBe(403);
    expect(error.message).toBe('API key lacks contacts:read');
    expect(error.reason).toBe('scope');
  });
});
