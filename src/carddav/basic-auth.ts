import { AuthError, type Authenticator } from '../auth/authenticator.js';

/** The one challenge of every 401 here, whatever the Host: address book clients then offer Basic with the API key. */
export const BASIC_CHALLENGE = 'Basic realm="Contacts"';

const BASIC = /^Basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i;

/**
 * Address book clients send HTTP Basic: any user name (the email, by convention) and the API key as the password. The
 * key is checked as the REST API checks a Bearer key (which is accepted here too), so every key rule holds the same; a
 * 401 challenges for Basic.
 */
export function basicOrBearer(keys: Pick<Authenticator, 'authenticate'>): Pick<Authenticator, 'authenticate'> {
  return {
    async authenticate(authorization, scope) {
      try {
        return await keys.authenticate(asBearer(authorization), scope);
      } catch (error) {
        if (error instanceof AuthError && error.status === 401) throw new AuthError(401, error.message, error.reason, BASIC_CHALLENGE);
        throw error;
      }
    },
  };
}

/** Basic credentials as the Bearer header of their password; anything else as it came (the authenticator judges it). */
export function asBearer(authorization: string | undefined): string | undefined {
  const encoded = BASIC.exec(authorization ?? '')?.[1];
  if (encoded === undefined) return authorization;
  const credentials = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  // Without a password there is no key: the authenticator refuses the header as it came.
  return colon < 0 || colon === credentials.length - 1 ? authorization : `Bearer ${credentials.slice(colon + 1)}`;
}
