import { SignJWT, jwtVerify, errors } from 'jose';
import { OAN_REALM } from '@oan/protocol';

export interface OanJwtOptions {
  accountId: string;
  /** `null` omits the claim: such a token counts as realm `gofers`; tests mint those. */
  realm?: string | null;
  ttlSeconds: number;
}

export interface VerifiedJwt {
  sub: string;
  /** The `realm` claim as signed; absent when the token has none. */
  realm?: string;
  iat?: number;
  exp?: number;
}

export class InvalidJwtError extends Error {
  override readonly name = 'InvalidJwtError';
}

const ALG = 'HS256';
const keyOf = (secret: string) => new TextEncoder().encode(secret);

/** Mints an OAN operator token: HS256, claims `sub`, `realm`, `iat`, `exp`. */
export async function signOanJwt(secret: string, opts: OanJwtOptions): Promise<string> {
  const realm = opts.realm === undefined ? OAN_REALM : opts.realm;
  const claims = realm === null ? {} : { realm };
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALG, typ: 'JWT' })
    .setSubject(opts.accountId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + opts.ttlSeconds)
    .sign(keyOf(secret));
}

/**
 * Verifies signature and expiry. Only HS256 is accepted: `alg: none` and asymmetric algorithms
 * (the classic key-confusion attacks) fail before any claim is read.
 */
export async function verifyJwt(secret: string, token: string): Promise<VerifiedJwt> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), { algorithms: [ALG] });
    if (typeof payload.sub !== 'string' || payload.sub === '')
      throw new InvalidJwtError('token has no subject');
    if (payload.exp === undefined) throw new InvalidJwtError('token has no expiry');
    const realm = payload['realm'];
    if (realm !== undefined && typeof realm !== 'string')
      throw new InvalidJwtError('realm claim is not a string');
    return { sub: payload.sub, realm, iat: payload.iat, exp: payload.exp };
  } catch (err) {
    if (err instanceof InvalidJwtError) throw err;
    if (err instanceof errors.JOSEError || err instanceof TypeError) throw new InvalidJwtError(reason(err));
    throw err;
  }
}

function reason(err: Error): string {
  return err instanceof errors.JWTExpired ? 'token expired' : 'token invalid';
}
