/** The rate-limit headers of every response to an authenticated request, as the OpenAPI document shows them. */
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    description: 'The key’s quota, per draft-ietf-httpapi-ratelimit-headers: `"default";q=<requests>;w=<window seconds>`.',
    type: 'string',
  },
  RateLimit: {
    description:
      'What is left of the quota: `"default";r=<remaining>;t=<seconds until the window resets>`. Absent when the count is momentarily unknown.',
    type: 'string',
  },
  'X-RateLimit-Limit': { description: 'Legacy form: requests allowed per window.', type: 'string' },
  'X-RateLimit-Remaining': { description: 'Legacy form: requests left in this window.', type: 'string' },
  'X-RateLimit-Reset': { description: 'Legacy form: seconds until the window resets.', type: 'string' },
} as const;

export const RETRY_AFTER_HEADER = {
  'Retry-After': { description: 'Seconds to wait before the key’s window resets.', type: 'string' },
} as const;
