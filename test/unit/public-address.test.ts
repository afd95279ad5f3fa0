import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/domain/public-address.js';

/** Public addresses, IPv4 and IPv6 (among them IPv4 carried in the forms judged by their IPv4 address). */
const PUBLIC: [string, string][] = [
  ['93.184.215.14', 'IPv4 unicast'],
  ['8.8.8.8', 'IPv4 unicast'],
  ['1.1.1.1', 'IPv4 unicast'],
  ['2606:4700:4700::1111', 'global unicast'],
  ['2a00:1450:4001:80b::200e', 'global unicast'],
  ['2001:4860:4860::8888', 'global unicast, outside 2001::/23'],
  ['::ffff:8.8.8.8', 'IPv4-mapped, of a public IPv4 address'],
  ['64:ff9b::8.8.8.8', 'NAT64 well-known prefix, of a public IPv4 address'],
  ['64:ff9b::5db8:d70e', 'NAT64 well-known prefix, hex, of 93.184.215.14'],
];

/** Every special range, IPv4 and IPv6, with an address in it; embedded IPv4 forms are refused whatever they carry. */
const NOT_PUBLIC: [string, string][] = [
  ['0.0.0.0', 'IPv4 this network'],
  ['0.1.2.3', 'IPv4 this network'],
  ['127.0.0.1', 'IPv4 loopback'],
  ['127.1.2.3', 'IPv4 loopback'],
  ['10.1.2.3', 'IPv4 private'],
  ['172.16.0.1', 'IPv4 private'],
  ['172.31.255.254', 'IPv4 private'],
  ['192.168.1.1', 'IPv4 private'],
  ['100.64.0.1', 'IPv4 shared (carrier-grade NAT)'],
  ['169.254.169.254', 'IPv4 link-local (cloud metadata)'],
  ['192.0.0.8', 'IPv4 IETF protocol assignments'],
  ['192.0.2.1', 'IPv4 documentation'],
  ['198.51.100.1', 'IPv4 documentation'],
  ['203.0.113.1', 'IPv4 documentation'],
  ['198.18.0.1', 'IPv4 benchmarking'],
  ['192.88.99.1', 'IPv4 6to4 relay anycast'],
  ['224.0.0.1', 'IPv4 multicast'],
  ['240.0.0.1', 'IPv4 reserved'],
  ['255.255.255.255', 'IPv4 broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::127.0.0.1', 'IPv4-compatible (::/96, deprecated), of loopback'],
  ['::7f00:1', 'IPv4-compatible, hex, of loopback'],
  ['::10.0.0.1', 'IPv4-compatible, of a private address'],
  ['::8.8.8.8', 'IPv4-compatible, even of a public address'],
  ['::ffff:127.0.0.1', 'IPv4-mapped, of loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped, hex, of loopback'],
  ['::ffff:10.0.0.1', 'IPv4-mapped, of a private address'],
  ['::ffff:169.254.169.254', 'IPv4-mapped, of link-local'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated (::ffff:0:0:0/96), of loopback'],
  ['::ffff:0:8.8.8.8', 'IPv4-translated, even of a public address'],
  ['64:ff9b::127.0.0.1', 'NAT64 well-known prefix, of loopback'],
  ['64:ff9b::a00:1', 'NAT64 well-known prefix, of a private address'],
  ['64:ff9b::a9fe:a9fe', 'NAT64 well-known prefix, of link-local'],
  ['64:ff9b:1::a00:1', 'NAT64 local-use prefix (64:ff9b:1::/48)'],
  ['64:ff9b:1:808:800::', 'NAT64 local-use prefix, even of a public address'],
  ['100::1', 'discard-only (100::/64)'],
  ['2001::1', 'Teredo (2001::/32)'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo, an obfuscated client address'],
  ['2001:2::1', 'benchmarking (2001:2::/48)'],
  ['2001:3::1', 'AMT (2001:3::/32)'],
  ['2001:4:112::1', 'AS112 (2001:4:112::/48)'],
  ['2001:10::1', 'ORCHID (2001:10::/28)'],
  ['2001:20::1', 'ORCHIDv2 (2001:20::/28)'],
  ['2001:1::1', 'IETF protocol assignments (2001::/23)'],
  ['2001:db8::1', 'documentation (2001:db8::/32)'],
  ['3fff::1', 'documentation (3fff::/20)'],
  ['2002:7f00:1::', '6to4 (2002::/16), of loopback'],
  ['2002:a00:1::1', '6to4, of a private address'],
  ['2002:808:808::1', '6to4, even of a public address'],
  ['2620:4f:8000::1', 'AS112 (2620:4f:8000::/48)'],
  ['5f00::1', 'segment routing (5f00::/16)'],
  ['fc00::1', 'unique local (fc00::/7)'],
  ['fd12:3456::1', 'unique local'],
  ['fec0::1', 'site-local (fec0::/10, deprecated)'],
  ['fe80::1', 'link-local (fe80::/10)'],
  ['fe80::1%2', 'link-local, with a zone'],
  ['ff02::1', 'multicast (ff00::/8)'],
  ['ff0e::1', 'multicast, global scope'],
  ['1000::1', 'unassigned, outside 2000::/3'],
  ['4000::1', 'unassigned, outside 2000::/3'],
  ['::1.2.3.256', 'an IPv4 tail with an octet over 255'],
  ['1.2.3.256', 'an IPv4 octet over 255'],
  ['not an address', 'not an address'],
  ['', 'empty'],
];

describe('isPublicAddress: what an outgoing request to a URL someone else chose may connect to', () => {
  it.each(PUBLIC)('lets %s through (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each(NOT_PUBLIC)('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});
