import { describe, expect, it } from 'vitest';
import { createOutgoingFetch } from '../../src/oauth/outgoing-fetch.js';
import { startDocumentServer } from '../support/oauth-client.js';

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
