import ipaddr from 'ipaddr.js';

/**
 * What the limits per client address count under, from `request.ip` (which TRUST_PROXY decides): an IPv4 address (an
 * IPv4-mapped IPv6 one as its IPv4), or an IPv6 address's /64: one host usually holds a whole /64, and would otherwise
 * have 2^64 limits.
 */
export function clientAddressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${address.toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
}
