import { isIP } from 'node:net';
import { InputError } from './errors.js';
import { isPublicAddress } from './public-address.js';

export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** `localhost` and every name under it resolve to loopback (RFC 6761), whatever a resolver says. */
const LOOPBACK_NAME = /^(?:.+\.)?localhost\.?$/;

export interface WebhookUrlOptions {
  /** WEBHOOKS_ALLOW_PRIVATE_URLS: plain http, and loopback, private and link-local hosts, are allowed (tests, private deployments). */
  allowPrivate: boolean;
}

/**
 * The URL an endpoint may deliver to, or an InputError naming what is wrong with it: https (http too when private
 * addresses are allowed), no user name or password, at most 2048 characters, and no host that is an address literal
 * (IPv4 in any of the forms WHATWG URL reads as one, IPv6 in brackets, IPv4-mapped IPv6) or a `localhost` name that is
 * not public. A host name is checked again where it is resolved, at every connection (src/net/public-lookup.ts).
 */
export function checkWebhookUrl(url: string, options: WebhookUrlOptions): URL {
  if (url.length > WEBHOOK_URL_MAX_LENGTH) {
    throw new InputError(`url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters; got ${url.length}`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError(`url must be an absolute URL such as https://example.com/webhooks; got ${JSON.stringify(url)}`);
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(parsed.protocol)) {
    throw new InputError(
      `url must use ${options.allowPrivate ? 'https or http' : 'https'}; got ${JSON.stringify(parsed.protocol.slice(0, -1))}`,
    );
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new InputError('url must not hold a user name or password; the receiver verifies the signature instead');
  }
  if (!options.allowPrivate) refuseNonPublicHost(parsed.hostname);
  return parsed;
}

function refuseNonPublicHost(hostname: string): void {
  // WHATWG URL has already written every IPv4 form (2130706433, 0x7f.1, 0177.0.0.1) as a dotted quad, lower-cased
  // names and compressed IPv6 (kept in brackets).
  const address = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  if (isIP(address) !== 0 && !isPublicAddress(address)) {
    throw new InputError(
      `url must not name a loopback, private, link-local, shared or other non-public address; got ${JSON.stringify(hostname)}`,
    );
  }
  if (LOOPBACK_NAME.test(hostname)) {
    throw new InputError(`url must not name localhost, a loopback host; got ${JSON.stringify(hostname)}`);
  }
}
