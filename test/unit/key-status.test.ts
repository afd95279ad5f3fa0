import { describe, expect, it } from 'vitest';
import { keyStatus, type ApiKeyRecord } from '../../src/operations/keys.js';

const EXPIRES_AT = '2025-01-01T00:00:00.000Z';
const expiry = Date.parse(EXPIRES_AT);
const key = (fields: Pick<ApiKeyRecord, 'expires_at' | 'revoked_at'>): ApiKeyRecord => ({
  id: 'k',
  owner_id: 'u',
  label: null,
  start: null,
  scopes: [],
  created_at: '2024-01-01T00:00:00.000Z',
  last_used_at: null,
  ...fields,
});

describe('keyStatus', () => {
  it('is active until expires_at, expired from then on, and active forever without one', () => {
    expect(keyStatus(key({ expires_at: EXPIRES_AT, revoked_at: null }), expiry - 1)).toBe('active');
    expect(keyStatus(key({ expires_at: EXPIRES_AT, revoked_at: null }), expiry)).toBe('expired');
    expect(keyStatus(key({ expires_at: null, revoked_at: null }), expiry)).toBe('active');
  });

  it('is revoked once revoked, whether or not it has expired', () => {
    for (const now of [expiry - 1, expiry]) {
      expect(keyStatus(key({ expires_at: EXPIRES_AT, revoked_at: '2024-06-01T00:00:00.000Z' }), now)).toBe('revoked');
    }
  });
});
