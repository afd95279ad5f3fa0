import { mcpResourceOf } from '../domain/mcp-resource.js';
import type { Environment } from './schema.js';

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

/** The OAUTH_* variables read from the environment; `listenUrl` is the issuer when OAUTH_ISSUER is unset. */
export function oauthConfigOf(env: Environment, listenUrl: string): OAuthConfig {
  const issuer = env.OAUTH_ISSUER ?? listenUrl;
  const { OAUTH_EXTERNAL_ISSUER: externalIssuer, OAUTH_EXTERNAL_JWKS_URL: jwksUrl } = env;
  return Object.freeze({
    issuer,
    external:
      externalIssuer === undefined || jwksUrl === undefined
        ? null
        : Object.freeze({
            issuer: externalIssuer,
            jwksUrl,
            audience: env.OAUTH_EXTERNAL_AUDIENCE ?? mcpResourceOf({ issuer }),
            userClaim: env.OAUTH_EXTERNAL_USER_CLAIM,
          }),
    consent: Object.freeze({
      productName: env.OAUTH_PRODUCT_NAME,
      accentColor: env.OAUTH_ACCENT_COLOR,
      logoUrl: env.OAUTH_LOGO_URL ?? null,
      apiKeysUrl: env.OAUTH_API_KEYS_URL ?? null,
    }),
    clientMetadataAllowPrivate: env.OAUTH_CLIENT_METADATA_ALLOW_PRIVATE,
  });
}
