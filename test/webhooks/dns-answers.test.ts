import type { LookupAddress } from 'node:dns';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOutgoingFetch } from '../../src/oauth/outgoing-fetch.js';
import { createWebhookSender } from '../../src/webhooks/sender.js';
import { listenOnFreePort } from '../support/listen.js';

/** What a hostile DNS server answers for each name under `.dns.test`: addresses that lead inside. */
const ANSWERS: Record<string, LookupAddress[]> = {
  'compatible.dns.test': [{ address: '::7f00:1', family: 6 }],
  'mapped.dns.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'translated.dns.test': [{ address: '::ffff:0:7f00:1', family: 6 }],
  'nat64.dns.test': [{ address: '64:ff9b::a00:1', family: 6 }],
  'nat64-local.dns.test': [{ address: '64:ff9b:1::a00:1', family: 6 }],
  '6to4.dns.test': [{ address: '2002:7f00:1::1', family: 6 }],
  'teredo.dns.test': [{ address: '2001:0:4136:e378:8000:63bf:3fff:fdd2', family: 6 }],
  'site-local.dns.test': [{ address: 'fec0::1', family: 6 }],
  'unique-local.dns.test': [{ address: 'fd00::1', family: 6 }],
  'link-local.dns.test': [{ address: 'fe80::1', family: 6 }],
  'multicast.dns.test': [{ address: 'ff02::1', family: 6 }],
  'discard.dns.test': [{ address: '100::1', family: 6 }],
  'documentation.dns.test': [{ address: '2001:db8::1', family: 6 }],
  // One public address beside one inside: every address must be public.
  'mixed.dns.test': [
    { address: '2606:4700:4700::1111', family: 6 },
    { address: '::127.0.0.1', family: 6 },
  ],
};

// The resolver both outgoing requests use (src/net/public-lookup.ts), answering for the names above.
vi.mock('node:dns', async (original) => {
  const dns = await original<typeof import('node:dns')>();
  const lookup = (hostname: string, options: object, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
    const answer = ANSWERS[hostname];
    if (answer === undefined) return dns.lookup(hostname, options, callback as never);
    setImmediate(() => callback(null, answer));
  };
  return { ...dns, default: { ...dns, lookup }, lookup };
});

describe('a DNS answer that leads inside is refused when the connection is made', () => {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  let port = 0;
  const sender = createWebhookSender({ allowPrivate: false, timeoutMs: 2000 });

  beforeAll(async () => {
    ({ port } = await listenOnFreePort(server));
  });
  afterAll(async () => {
    sender.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each(Object.entries(ANSWERS))('webhook delivery to %s (%j): no connection', async (name, answer) => {
    const outcome = await sender.send({
      url: `https://${name}:${port}/hook`,
      eventId: 'msg_dns',
      timestamp: 1_700_000_000,
      signature: 'v1,abc',
      body: '{}',
    });
    const refused = answer.find(({ address }) => address !== '2606:4700:4700::1111')!.address;
    expect(outcome).toMatchObject({
      statusCode: null,
      failure: 'connection_error',
      error: `${name} resolves to ${refused}, which is not a public address`,
    });
    expect(connections).toBe(0);
  });

  it.each(Object.keys(ANSWERS))('the OAuth metadata document fetch from %s: no connection', async (name) => {
    await expect(createOutgoingFetch({ allowPrivate: false })(`https://${name}:${port}/client.json`)).rejects.toThrow(
      /which is not a public address$/,
    );
    expect(connections).toBe(0);
  });
});
