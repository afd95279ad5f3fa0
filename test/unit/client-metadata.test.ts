import { describe, expect, it } from 'vitest';
import { clientMetadataProblem, MAX_CLIENT_METADATA_BYTES } from '../../src/oauth/client-metadata.js';

describe('clientMetadataProblem', () => {
  it.each([
    'http://127.0.0.1/cb',
    'http://127.0.0.1:53117/cb',
    'http://[::1]:8080/cb',
    'http://localhost/cb',
    'https://evil.example/cb',
    'myapp:/cb',
  ])('accepts the redirect URI %s', (uri) => {
    expect(clientMetadataProblem({ redirect_uris: [uri] })).toBeNull();
  });

  it.each([
    'http://evil.example/cb',
    'http://192.168.1.2/cb',
    'http://localhost.evil.example/cb',
    'http://127.0.0.1.nip.io/cb',
    'http://[::2]/cb',
  ])('refuses the http redirect URI %s off loopback, naming redirect_uris first (invalid_redirect_uri)', (uri) => {
    expect(clientMetadataProblem({ redirect_uris: ['http://127.0.0.1/cb', uri] })).toBe(
      `redirect_uris may use http only on loopback (127.0.0.1, [::1] or localhost); use https for ${uri}`,
    );
  });

  it('counts client_name in characters, not UTF-16 units: 200 emoji pass, 201 letters do not', () => {
    expect(clientMetadataProblem({ client_name: '🙂'.repeat(200) })).toBeNull();
    expect(clientMetadataProblem({ client_name: 'a'.repeat(201) })).toBe('client_name must be at most 200 characters');
  });

  it('caps the whole metadata as JSON bytes', () => {
    const padding = (bytes: number) => ({
      client_uri: `https://a.example/${'x'.repeat(bytes - '{"client_uri":"https://a.example/"}'.length)}`,
    });
    expect(clientMetadataProblem(padding(MAX_CLIENT_METADATA_BYTES))).toBeNull();
    expect(clientMetadataProblem(padding(MAX_CLIENT_METADATA_BYTES + 1))).toBe(
      `client metadata must be at most ${MAX_CLIENT_METADATA_BYTES} bytes of JSON; got ${MAX_CLIENT_METADATA_BYTES + 1}`,
    );
  });

  it('leaves malformed values to the provider’s own checks', () => {
    expect(clientMetadataProblem({ client_name: 42, redirect_uris: 'http://evil.example/cb' })).toBeNull();
    expect(clientMetadataProblem({ redirect_uris: [42, 'not a uri'] })).toBeNull();
  });
});
