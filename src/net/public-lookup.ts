import { lookup as resolve } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPublicAddress } from '../domain/public-address.js';

/**
 * Resolves a host name and hands the connection only addresses that are all public, so the socket connects to an
 * address that was checked (no second resolution that a rebinding DNS server could answer differently). Pass it as
 * the `lookup` of every outgoing request to a URL someone else chose (a Client ID Metadata Document, a webhook).
 */
export const lookupPublicOnly: LookupFunction = (hostname, options, callback) => {
  resolve(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '');
    const refused = addresses.find(({ address }) => !isPublicAddress(address));
    if (refused !== undefined || addresses.length === 0) {
      return callback(new Error(`${hostname} resolves to ${refused?.address ?? 'nothing'}, which is not a public address`), '');
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};
