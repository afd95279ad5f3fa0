import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/domain/public-address.js';
import { createOutgoingFetch } from '../../src/oauth/outgoing-fetch.js';
import { startDocumentServer } from '../support/oauth-client.js';

describe('isPublicAddress', () => {
  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111'])('lets %s through', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it.each([
    '127.0.0.1', '127.1.2.3', '0.0.0.0', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '192.0.2.1', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12::1', '::ffff:127.0.0.1',
    '::ffff:10.0.0.1', '2001:db8::1', 'not an address',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  }); // prettier-ignore
});

describe('the metadata document fetch', () => {
  it('settles on a status a Response cannot carry (999) instead of throwing out of its callback and ending the process', async () => {
    const documents = await startDocumentServer(new Map([['/agent.json', () => ({})]]), 999);
    const checked = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the test server's certificate is its own
    try {
      const response = await createOutgoingFetch({ allowPrivate: true })(`${documents.origin}/agent.json`);
      expect(response.status).toBe(502);
      expect(documents.fetched).toEqual(['/agent.json']);
    } finally {
      if (checked === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = checked;
      await documents.close();
    }
  });
});
