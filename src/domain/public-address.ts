import ipaddr from 'ipaddr.js';

/** IANA's global unicast space: every other IPv6 address is reserved, local, multicast or a deprecated form. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/**
 * RFC 6052's well-known NAT64 prefix: what DNS64 answers on an IPv6-only network for a host with only an IPv4
 * address, so it is judged by that IPv4 address. The local-use prefix 64:ff9b:1::/48 (RFC 8215) is refused whole: its
 * operator chooses where the IPv4 address sits.
 */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/**
 * Whether an address is globally routable: not loopback, private, link-local, shared, documentation or any other
 * special use. IPv4 is judged by its range. IPv6 must be global unicast (2000::/3) outside every special range within
 * it (6to4 2002::/16 and Teredo 2001::/32 among them, whose embedded IPv4 addresses can lead inside), which refuses
 * the IPv4-compatible ::/96, IPv4-translated ::ffff:0:0:0/96, site-local, unique-local, link-local, multicast and
 * discard ranges outright. An IPv4-mapped address (::ffff:0:0/96) and a well-known NAT64 address are judged by the
 * IPv4 address they carry.
 */
export function isPublicAddress(address: string): boolean {
  const written = address.includes(':') ? withHexTail(address) : address;
  if (!ipaddr.isValid(written)) return false;
  const parsed = ipaddr.parse(written);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const ipv6 = parsed as ipaddr.IPv6;
  if (ipv6.isIPv4MappedAddress() || ipv6.match(NAT64_WELL_KNOWN)) {
    return new ipaddr.IPv4(ipv6.toByteArray().slice(12)).range() === 'unicast';
  }
  return ipv6.match(GLOBAL_UNICAST) && ipv6.range() === 'unicast';
}

/**
 * An IPv6 address with its dotted IPv4 tail written in hex: ipaddr.js reads `::a.b.c.d` as IPv4-mapped (its
 * "deprecated transitional" form), where RFC 4291 makes it IPv4-compatible: `::8.8.8.8` is `::808:808`. An octet over
 * 255 makes a group too large, which ipaddr.js refuses.
 */
function withHexTail(address: string): string {
  return address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)(%.*)?$/, (_, a: string, b: string, c: string, d: string, zone = '') => {
    const group = (high: string, low: string) => (Number(high) * 256 + Number(low)).toString(16);
    return `${group(a, b)}:${group(c, d)}${zone}`;
  });
}
