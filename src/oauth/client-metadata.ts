/** A client's name is shown on the consent page: a product name, not a document. */
export const MAX_CLIENT_NAME_CHARACTERS = 200;
/** A client's whole metadata as kept (every registration is a row for at least a day): a few redirect URIs and names. */
export const MAX_CLIENT_METADATA_BYTES = 4096;

/** OAuth 2.1 and the MCP authorization spec: an `http` redirect URI must point at the user's own machine. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * What is wrong with a client's metadata (registered, stored, or read from its metadata document), or null. A problem
 * with `redirect_uris` starts with that word, which oidc-provider answers as `invalid_redirect_uri`; the others are
 * `invalid_client_metadata` (RFC 7591 §3.2.2).
 */
export function clientMetadataProblem(metadata: Record<string, unknown>): string | null {
  const name = metadata.client_name;
  if (typeof name === 'string' && [...name].length > MAX_CLIENT_NAME_CHARACTERS) {
    return `client_name must be at most ${MAX_CLIENT_NAME_CHARACTERS} characters`;
  }
  const uris = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];
  const offLoopback = uris.find((uri) => typeof uri === 'string' && isHttpOffLoopback(uri));
  if (offLoopback !== undefined) {
    return `redirect_uris may use http only on loopback (127.0.0.1, [::1] or localhost); use https for ${String(offLoopback)}`;
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > MAX_CLIENT_METADATA_BYTES) return `client metadata must be at most ${MAX_CLIENT_METADATA_BYTES} bytes of JSON; got ${bytes}`;
  return null;
}

function isHttpOffLoopback(uri: string): boolean {
  const url = URL.parse(uri);
  return url !== null && url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * The authorization-server metadata with the issuer, then `client_id_metadata_document_supported`, ahead of
 * `registration_endpoint` and the rest: MCP 2026-07-28 makes Client ID Metadata Documents the way a client with no
 * prior relationship registers, and keeps dynamic registration (deprecated there) only for older clients. Key order
 * means nothing to a parser; it is what a person reading the document sees first.
 */
export function registrationPreferenceFirst(metadata: Record<string, unknown>): Record<string, unknown> {
  const { issuer, client_id_metadata_document_supported: metadataDocuments, ...rest } = metadata;
  return { issuer, client_id_metadata_document_supported: metadataDocuments, ...rest };
}
