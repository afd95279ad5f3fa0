import { MCP_PATH } from '../mcp/endpoint.js';

/** How /mcp accepts OAuth access tokens besides API keys (docs/oauth.md). */
export interface OAuthConfig {
  /**
   * OAUTH_ISSUER: the public base URL clients reach this service at (`https://contacts.example.com`), the issuer of
   * the embedded authorization server and the base of `/mcp`'s resource identifier. Default: the URL `serve` listens
   * at and prints (`http://127.0.0.1:3000`), wherever its host and port came from.
   */
  readonly issuer: string;
  /** Set when OAUTH_EXTERNAL_ISSUER names another authorization server whose JWTs /mcp accepts instead of its own. */
  readonly external: ExternalIssuerConfig | null;
  /** How the consent page presents the product. */
  readonly consent: ConsentBranding;
  /**
   * OAUTH_CLIENT_METADATA_ALLOW_PRIVATE (default false): let client metadata documents be fetched from loopback and
   * private addresses, and trust NODE_EXTRA_CA_CERTS for them. For tests only: it opens the fetch to the inside network.
   */
  readonly clientMetadataAllowPrivate: boolean;
}

export interface ExternalIssuerConfig {
  /** OAUTH_EXTERNAL_ISSUER: the `iss` the tokens carry. */
  readonly issuer: string;
  /** OAUTH_EXTERNAL_JWKS_URL: where its signing keys are. */
  readonly jwksUrl: string;
  /** OAUTH_EXTERNAL_AUDIENCE (default the resource, `<OAUTH_ISSUER>/mcp`): the `aud` the tokens must carry. */
  readonly audience: string;
  /** OAUTH_EXTERNAL_USER_CLAIM (default `sub`): the claim holding the user's id (or email) in this service. */
  readonly userClaim: string;
}

export interface ConsentBranding {
  /** OAUTH_PRODUCT_NAME (default `Contacts`). */
  readonly productName: string;
  /** OAUTH_ACCENT_COLOR (default `#2f5bd3`): buttons and links, a `#rgb` or `#rrggbb` colour. */
  readonly accentColor: string;
  /** OAUTH_LOGO_URL (default none): an https image shown above the form. */
  readonly logoUrl: string | null;
  /** OAUTH_API_KEYS_URL (default none): where a user makes an API key, linked from the form. */
  readonly apiKeysUrl: string | null;
}

export function mcpResourceOf(config: Pick<OAuthConfig, 'issuer'>): string {
  return `${config.issuer}${MCP_PATH}`;
}

/** Reads OAUTH_*; `listenUrl` is the issuer when OAUTH_ISSUER is unset; `read` names the variable in a parse error. */
export function parseOAuthConfig(
  env: NodeJS.ProcessEnv,
  listenUrl: string,
  read: <T>(name: string, parse: () => T) => T = (_name, parse) => parse(),
): OAuthConfig {
  const issuer = read('OAUTH_ISSUER', () => parseBaseUrl(env.OAUTH_ISSUER) ?? listenUrl);
  const externalIssuer = read('OAUTH_EXTERNAL_ISSUER', () => parseHttpsUrl(env.OAUTH_EXTERNAL_ISSUER));
  const jwksUrl = read('OAUTH_EXTERNAL_JWKS_URL', () => parseHttpsUrl(env.OAUTH_EXTERNAL_JWKS_URL));
  if ((externalIssuer === null) !== (jwksUrl === null)) {
    read('OAUTH_EXTERNAL_JWKS_URL', () => {
      throw new Error('and OAUTH_EXTERNAL_ISSUER must be set together');
    });
  }
  return Object.freeze({
    issuer,
    external:
      externalIssuer === null || jwksUrl === null
        ? null
        : Object.freeze({
            issuer: externalIssuer,
            jwksUrl,
            audience: env.OAUTH_EXTERNAL_AUDIENCE?.trim() || mcpResourceOf({ issuer }),
            userClaim: env.OAUTH_EXTERNAL_USER_CLAIM?.trim() || 'sub',
          }),
    consent: Object.freeze({
      productName: read('OAUTH_PRODUCT_NAME', () => parseName(env.OAUTH_PRODUCT_NAME)),
      accentColor: read('OAUTH_ACCENT_COLOR', () => parseColor(env.OAUTH_ACCENT_COLOR)),
      logoUrl: read('OAUTH_LOGO_URL', () => parseHttpsUrl(env.OAUTH_LOGO_URL)),
      apiKeysUrl: read('OAUTH_API_KEYS_URL', () => parseHttpsUrl(env.OAUTH_API_KEYS_URL)),
    }),
    clientMetadataAllowPrivate: read('OAUTH_CLIENT_METADATA_ALLOW_PRIVATE', () => parseBoolean(env.OAUTH_CLIENT_METADATA_ALLOW_PRIVATE)),
  });
}

/** An http(s) origin, as clients write it: the service answers at the root of its host. */
function parseBaseUrl(text: string | undefined): string | null {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return null;
  const url = URL.canParse(trimmed) ? new URL(trimmed) : null;
  if (!url || !['http:', 'https:'].includes(url.protocol) || url.origin !== trimmed) {
    throw new Error(`must be the public base URL clients use, like https://contacts.example.com (no trailing slash); got "${trimmed}"`);
  }
  return trimmed;
}

function parseHttpsUrl(text: string | undefined): string | null {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return null;
  if (!URL.canParse(trimmed) || new URL(trimmed).protocol !== 'https:') throw new Error(`must be an https:// URL; got "${trimmed}"`);
  return trimmed;
}

function parseName(text: string | undefined): string {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return 'Contacts';
  if (trimmed.length > 60) throw new Error('must be at most 60 characters');
  return trimmed;
}

function parseColor(text: string | undefined): string {
  const trimmed = text?.trim() ?? '';
  if (trimmed === '') return '#2f5bd3';
  if (!/^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i.test(trimmed)) throw new Error(`must be a colour like #2f5bd3; got "${trimmed}"`);
  return trimmed;
}

/** `true` or `false` (any case); unset or blank is false. */
export function parseBoolean(text: string | undefined): boolean {
  const trimmed = text?.trim().toLowerCase() ?? '';
  if (trimmed === '' || trimmed === 'false') return false;
  if (trimmed === 'true') return true;
  throw new Error(`must be true or false; got "${text}"`);
}
