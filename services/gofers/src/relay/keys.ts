import {
  createCipheriv,
  createDecipheriv,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  createHmac,
  hkdfSync,
  randomBytes,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';

/** A relay agent address (its identity on the relay): `0x` + the raw 32-byte Ed25519 public key in lowercase hex. */
export const ADDRESS = /^0x[0-9a-f]{64}$/;

/** The address of an Ed25519 key (private or public). */
export function addressOf(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  return `0x${Buffer.from(pub.export({ format: 'jwk' }).x!, 'base64url').toString('hex')}`;
}

export const newRelayKey = (): KeyObject => generateKeyPairSync('ed25519').privateKey;

/** Ed25519 over the UTF-8 bytes of `text`, as hex without `0x` (what the ConnectOnion clients send). */
export const signText = (key: KeyObject, text: string): string =>
  sign(null, Buffer.from(text, 'utf8'), key).toString('hex');

/** Whether `signatureHex` (an optional `0x` stripped) is `address`'s signature of `text`. Never throws. */
export function verifiedBy(address: string, text: string, signatureHex: string): boolean {
  if (!ADDRESS.test(address)) return false;
  try {
    const key = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(address.slice(2), 'hex').toString('base64url') },
      format: 'jwk',
    });
    const sig = Buffer.from(signatureHex.replace(/^0x/, ''), 'hex');
    return sig.length === 64 && verify(null, Buffer.from(text, 'utf8'), key, sig);
  } catch {
    return false;
  }
}

/**
 * Seals the Gofers' private keys for their row in `gofers.relay_agents` (ADR 0023): AES-256-GCM
 * under a key derived (HKDF-SHA256) from GOFER_RELAY_KEY_SECRET (else `relayKeySecretOf`), with the Gofer id as associated
 * data, so a sealed key copied to another Gofer's row does not open. `v1.<iv>.<tag>.<ciphertext>`.
 */
/**
 * The sealing secret when GOFER_RELAY_KEY_SECRET is not set: derived from JWT_SECRET under a label of
 * its own, as the storage's URL-signing secret is, so a fleet needs no second secret to publish Gofers.
 * Rotating JWT_SECRET then makes the sealed keys unopenable: set GOFER_RELAY_KEY_SECRET to rotate apart.
 */
export const relayKeySecretOf = (config: {
  GOFER_RELAY_KEY_SECRET?: string | undefined;
  JWT_SECRET: string;
}) =>
  config.GOFER_RELAY_KEY_SECRET ??
  createHmac('sha256', config.JWT_SECRET).update('oan/gofer-relay-keys/v1').digest('hex');

export class KeySealer {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'oan gofer relay keys', 'v1', 32));
  }

  seal(privateKey: KeyObject, goferId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(goferId, 'utf8'));
    const der = privateKey.export({ format: 'der', type: 'pkcs8' });
    const body = Buffer.concat([cipher.update(der), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), body]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  /** Throws when the sealed text was not made by this secret for this Gofer. */
  open(sealed: string, goferId: string): KeyObject {
    const [v, iv, tag, body] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || !body) throw new Error('not a sealed relay key');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(goferId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const der = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  }
}
