import { createRemoteJWKSet, errors, jwtVerify } from 'jose';

export interface GoogleIdentity {
  sub: string;
  email: string;
}

/**
 * Verifies a Google ID token; `null` from `verify` means "not a valid sign-in token". With `nonce`
 * the token's `nonce` claim must be that value.
 */
export interface GoogleVerifier {
  verify(idToken: string, nonce?: string): Promise<GoogleIdentity | null>;
}

export interface GoogleVerifierOptions {
  jwksUrl: string;
  clientId: string;
  issuer: string;
}

/**
 * Google signs with RS256 keys published at its JWKS URL (jose caches and refreshes them). Google
 * documents both `https://accounts.google.com` and `accounts.google.com` as issuers, so the
 * configured issuer is accepted with or without its scheme. Only a verified email signs in: the
 * account id is derived from it. The nonce is checked only when the client names one: the web page
 * sends the nonce it put in its authorization request; the spec's connector flow has none.
 */
export function createGoogleVerifier(opts: GoogleVerifierOptions): GoogleVerifier {
  const jwks = createRemoteJWKSet(new URL(opts.jwksUrl), { timeoutDuration: 5000 });
  const issuers = [...new Set([opts.issuer, opts.issuer.replace(/^https?:\/\//, '')])];
  return {
    async verify(idToken, nonce) {
      try {
        const { payload } = await jwtVerify(idToken, jwks, {
          issuer: issuers,
          audience: opts.clientId,
          algorithms: ['RS256'],
        });
        const verified = payload['email_verified'] === true || payload['email_verified'] === 'true';
        const email = payload['email'];
        if (typeof payload.sub !== 'string' || typeof email !== 'string' || !verified) return null;
        if (nonce !== undefined && payload['nonce'] !== nonce) return null;
        return { sub: payload.sub, email };
      } catch (err) {
        // A JWKS that cannot be fetched or read is our failure (500), not the caller's bad token.
        if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) throw err;
        if (err instanceof errors.JOSEError) return null;
        throw err;
      }
    },
  };
}
