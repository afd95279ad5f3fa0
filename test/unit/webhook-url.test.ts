import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { checkWebhookUrl, WEBHOOK_URL_MAX_LENGTH } from '../../src/domain/webhook-url.js';
import { thrown } from '../support/thrown.js';

const PUBLIC_ONLY = { allowPrivate: false };
const PRIVATE_TOO = { allowPrivate: true };

/** The message of the InputError the URL is refused with. */
function refusal(url: string, options = PUBLIC_ONLY): string {
  const error = thrown(() => checkWebhookUrl(url, options));
  expect(error).toBeInstanceOf(InputError);
  return (error as Error).message;
}

describe('checkWebhookUrl: where an endpoint may deliver', () => {
  it('accepts https URLs on public names and public address literals, and returns them parsed', () => {
    for (const url of [
      'https://hooks.example.com/contacts?tenant=4#x',
      'https://93.184.215.14/hook',
      'https://[2606:4700:4700::1111]:8443/hook',
      'https://8.8.8.8',
    ]) {
      expect(checkWebhookUrl(url, PUBLIC_ONLY).href).toBe(new URL(url).href);
    }
  });

  it('refuses what is not an absolute URL, naming the input', () => {
    expect(refusal('hooks.example.com/x')).toBe(
      'url must be an absolute URL such as https://example.com/webhooks; got "hooks.example.com/x"',
    );
    expect(refusal('')).toMatch(/^url must be an absolute URL/);
    expect(refusal('https://')).toMatch(/^url must be an absolute URL/);
  });

  it('refuses plain http and every other scheme, unless private URLs are allowed (then http too)', () => {
    expect(refusal('http://hooks.example.com/')).toBe('url must use https; got "http"');
    expect(refusal('ftp://hooks.example.com/')).toBe('url must use https; got "ftp"');
    expect(refusal('javascript:alert(1)')).toBe('url must use https; got "javascript"');
    expect(refusal('http://2130706433/')).toBe('url must use https; got "http"');
    expect(checkWebhookUrl('http://hooks.example.com/', PRIVATE_TOO).protocol).toBe('http:');
    expect(refusal('file:///etc/passwd', PRIVATE_TOO)).toBe('url must use https or http; got "file"');
  });

  it('refuses a user name or password in the URL, even when private URLs are allowed', () => {
    for (const url of ['https://user:secret@hooks.example.com/', 'https://user@hooks.example.com/', 'https://:pw@hooks.example.com/']) {
      expect(refusal(url)).toBe('url must not hold a user name or password; the receiver verifies the signature instead');
      expect(refusal(url, PRIVATE_TOO)).toMatch(/user name or password/);
    }
  });

  it(`refuses URLs over ${WEBHOOK_URL_MAX_LENGTH} characters, even when private URLs are allowed`, () => {
    const base = 'https://hooks.example.com/';
    const longest = base + 'a'.repeat(WEBHOOK_URL_MAX_LENGTH - base.length);
    expect(checkWebhookUrl(longest, PUBLIC_ONLY).href).toBe(longest);
    expect(refusal(`${longest}a`, PRIVATE_TOO)).toBe(`url must be at most 2048 characters; got 2049`);
  });

  describe('refuses hosts that are non-public address literals, in every form WHATWG URL reads', () => {
    const cases: [string, string][] = [
      ['https://127.0.0.1/', '127.0.0.1'],
      ['https://127.255.0.9:8443/', '127.255.0.9'],
      ['https://10.1.2.3/', '10.1.2.3'],
      ['https://172.16.0.1/', '172.16.0.1'],
      ['https://172.31.255.254/', '172.31.255.254'],
      ['https://192.168.1.1/', '192.168.1.1'],
      ['https://169.254.169.254/latest/meta-data/', '169.254.169.254'],
      ['https://100.64.0.1/', '100.64.0.1'],
      ['https://100.127.255.254/', '100.127.255.254'],
      ['https://0.0.0.0/', '0.0.0.0'],
      ['https://255.255.255.255/', '255.255.255.255'],
      ['https://[::1]/', '[::1]'],
      ['https://[::]/', '[::]'],
      ['https://[fc00::1]/', '[fc00::1]'],
      ['https://[fd12:3456::1]/', '[fd12:3456::1]'],
      ['https://[fe80::1]/', '[fe80::1]'],
      ['https://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
      ['https://[::ffff:10.0.0.1]/', '[::ffff:a00:1]'],
      ['https://[::ffff:169.254.169.254]/', '[::ffff:a9fe:a9fe]'],
      // Decimal, hex, octal and short IPv4 forms: WHATWG URL writes each as the dotted quad it means.
      ['https://2130706433/', '127.0.0.1'],
      ['https://0x7f000001/', '127.0.0.1'],
      ['https://0x7f.1/', '127.0.0.1'],
      ['https://0177.0.0.1/', '127.0.0.1'],
      ['https://127.1/', '127.0.0.1'],
      ['https://0xa9.0xfe.0xa9.0xfe/', '169.254.169.254'],
      ['https://3232235777/', '192.168.1.1'],
    ];
    it.each(cases)('%s', (url, host) => {
      expect(refusal(url)).toBe(
        `url must not name a loopback, private, link-local, shared or other non-public address; got ${JSON.stringify(host)}`,
      );
    });
  });

  it('counts localhost and every name under it as loopback', () => {
    for (const [url, host] of [
      ['https://localhost/', 'localhost'],
      ['https://LocalHost:8443/', 'localhost'],
      ['https://localhost./', 'localhost.'],
      ['https://api.localhost/', 'api.localhost'],
    ]) {
      expect(refusal(url!)).toBe(`url must not name localhost, a loopback host; got ${JSON.stringify(host)}`);
    }
    // Only the name itself: these are ordinary names a resolver answers for.
    for (const url of ['https://localhost.example.com/', 'https://mylocalhost/', 'https://localhostx.io/']) {
      expect(checkWebhookUrl(url, PUBLIC_ONLY).hostname).toBe(new URL(url).hostname);
    }
  });

  it('allows loopback, private and link-local hosts when private URLs are allowed', () => {
    for (const url of [
      'http://127.0.0.1:3000/hook',
      'http://localhost:8080/',
      'https://[::1]/',
      'http://10.0.0.5/',
      'http://2130706433/',
    ]) {
      expect(checkWebhookUrl(url, PRIVATE_TOO).href).toBe(new URL(url).href);
    }
  });
});
