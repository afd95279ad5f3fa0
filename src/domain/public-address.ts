import ipaddr from 'ipaddr.js';

/** Whether an address is globally routable: not loopback, private, link-local, shared, documentation or any other special use. */
export function isPublicAddress(address: string): boolean {
  return ipaddr.isValid(address) && ipaddr.process(address).range() === 'unicast';
}
