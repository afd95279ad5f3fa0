import Type from 'typebox';
import { RATE_LIMIT_HEADERS } from './rate-limit-headers.js';

export const ETAG_HEADER = {
  ETag: {
    description: 'A strong entity tag of this representation: send it back in `If-None-Match` to get 304 while it is current.',
    type: 'string',
  },
};

export const COMPRESSION_HEADERS = {
  'Content-Encoding': {
    description: '`br` or `gzip` when `Accept-Encoding` allows one and the page is 1 KB or more; absent when the page is sent as it is.',
    type: 'string',
    enum: ['br', 'gzip'],
  },
  Vary: { description: 'Always `Accept-Encoding`.', type: 'string' },
};

export const IF_NONE_MATCH_REQUEST_HEADER = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description: 'Entity tags from earlier answers, or `*`: the answer is 304 Not Modified, without a body, while one is current.',
    }),
  ),
});

/** 304 Not Modified: no body; it counts against the rate limit like any request that passed the key check. */
export function notModifiedResponse(condition: string) {
  return {
    description: `Not Modified: ${condition}. No body. It counts against the rate limit like any other request.`,
    headers: { ...ETAG_HEADER, ...RATE_LIMIT_HEADERS },
    type: 'null',
  };
}
