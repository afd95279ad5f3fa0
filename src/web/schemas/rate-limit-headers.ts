import type { ResponseHeader } from './common.js';

/**
 * The rate-limit headers of every response to a request counted against its key, as the OpenAPI document shows them.
 * The policy and the limit are always sent; the count may be unknown for a moment (the counter is unreachable and the
 * request is let through), and then the headers that carry it are left out.
 */
export const RATE_LIMIT_HEADERS: Record<string, ResponseHeader> = {
  'RateLimit-Policy': {
    description: 'The key’s quota, per draft-ietf-httpapi-ratelimit-headers: `"default";q=<requests>;w=<window seconds>`.',
    type: 'string',
    required: true,
  },
  RateLimit: {
    description:
      'What is left of the quota: `"default";r=<remaining>;t=<seconds until the window resets>`. Absent while the count is unknown.',
    type: 'string',
  },
  'X-RateLimit-Limit': { description: 'Legacy form: requests allowed per window.', type: 'integer', required: true },
  'X-RateLimit-Remaining': {
    description: 'Legacy form: requests left in this window. Absent while the count is unknown.',
    type: 'integer',
  },
  'X-RateLimit-Reset': { description: 'Legacy form: seconds until the window resets. Absent while the count is unknown.', type: 'integer' },
};

/**
 * The same headers where some answers under one status come before the count (a 400 for a missing Host does; a 429 for
 * an address over its limit of failed authentications does).
 */
export const SOMETIMES_RATE_LIMIT_HEADERS: Record<string, ResponseHeader> = Object.fromEntries(
  Object.entries(RATE_LIMIT_HEADERS).map(([name, { required: _required, ...header }]) => [name, header]),
);

export const RETRY_AFTER_HEADER: Record<string, ResponseHeader> = {
  'Retry-After': {
    description: 'Seconds to wait before the window (the key’s, or the address’s) resets.',
    type: 'integer',
    required: true,
  },
};
