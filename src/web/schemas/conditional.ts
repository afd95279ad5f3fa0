import Type from 'typebox';
import type { ResponseHeader } from './common.js';

export const ETAG_HEADER: Record<string, ResponseHeader> = {
  ETag: {
    description: 'A strong entity tag of this representation: send it back in `If-None-Match` to get 304 while it is current.',
    type: 'string',
    required: true,
  },
};

export const COMPRESSION_HEADERS: Record<string, ResponseHeader> = {
  'Content-Encoding': {
    description: '`br` or `gzip` when `Accept-Encoding` allows one and the body is 1 KB or more; absent when the body is sent as it is.',
    type: 'string',
    enum: ['br', 'gzip'],
  },
  Vary: {
    description: '`Accept-Encoding`; `Origin, Accept-Encoding` when the deployment allows cross-origin calls (CORS_ORIGINS).',
    type: 'string',
    enum: ['Accept-Encoding', 'Origin, Accept-Encoding'],
    required: true,
  },
};

export const IF_NONE_MATCH_REQUEST_HEADER = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      description: 'Entity tags from earlier answers, or `*`: the answer is 304 Not Modified, without a body, while one is current.',
    }),
  ),
});

/** 304 Not Modified: no body; the representation's tag, its caching rule, and `headers` (the rate limit's, where it counts). */
export function notModifiedResponse(condition: string, cacheControl: ResponseHeader, headers: Record<string, ResponseHeader> = {}) {
  return {
    description: `Not Modified: ${condition}. No body.`,
    headers: { 'Cache-Control': cacheControl, ...ETAG_HEADER, Vary: COMPRESSION_HEADERS.Vary!, ...headers },
    type: 'null',
  };
}
