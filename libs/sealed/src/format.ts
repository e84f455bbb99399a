import { z } from 'zod';
import { fromBase64url, toHex } from './encoding.ts';
import { SealedInputError, SealedOpenError } from './errors.ts';
import {
  MAX_SEALED_CIPHERTEXT_BYTES,
  MAX_SEALED_RECIPIENTS,
  SEALED_ALG,
  X25519_KEY_BYTES,
  sealedEnvelope,
  sealedRecipient,
  type SealedEnvelope,
} from './shape.ts';

/**
 * What both implementations of `oan-sealed-v1` share: the API, the plaintext codec, the bytes the
 * AAD and the HKDF info are made of, and the checks of ids, keys and envelopes. The cryptography
 * itself is written twice (webcrypto.ts, noble.ts) so that the two can be held against each other.
 */

/** What a sealed message says; its UTF-8 JSON is the plaintext (docs/sealed-messages.md). */
export const sealedContent = z.strictObject({
  content: z.string(),
  attachmentIds: z.array(z.string()).optional(),
});
export type SealedContent = z.infer<typeof sealedContent>;

export const CONTENT_KEY_BYTES = 32;
export const GCM_TAG_BYTES = 16;

/** `length` bytes of randomness. Injected only to make a test vector; the default is the platform's CSPRNG. */
export type Random = (length: number) => Uint8Array;

export interface DeviceKeyPair<PrivateKey> {
  privateKey: PrivateKey;
  /** The 32 raw X25519 public-key bytes (base64url of them is what `PUT /keys/{keyId}` publishes). */
  publicKey: Uint8Array;
}

export interface SealRecipientKey {
  accountId: string;
  keyId: string;
  publicKey: Uint8Array;
}

export interface SealOptions {
  conversationId: string;
  senderAccountId: string;
  /** Every device key that may open the message: the other side's and the sender's own other devices. */
  recipients: SealRecipientKey[];
  /** Draws, in this order: e (32), K (32), N (12), then each recipient's nonce (12) in list order. */
  random?: Random;
}

export interface OpenOptions<PrivateKey> {
  conversationId: string;
  /** The sender the server says sent it; a message claimed for another sender does not open. */
  senderAccountId: string;
  myAccountId: string;
  keyId: string;
  privateKey: PrivateKey;
}

/** One implementation of `oan-sealed-v1`; `PrivateKey` is a CryptoKey (WebCrypto) or 32 bytes (noble). */
export interface Sealer<PrivateKey> {
  generateDeviceKey(): Promise<DeviceKeyPair<PrivateKey>>;
  /** A device key from its 32 raw private bytes (tests, vectors, a key restored from a backup). */
  importDeviceKey(rawPrivateKey: Uint8Array): Promise<DeviceKeyPair<PrivateKey>>;
  seal(content: SealedContent, options: SealOptions): Promise<SealedEnvelope>;
  /** Throws `SealedOpenError` whenever the envelope does not open for this key, whatever the reason. */
  open(envelope: unknown, options: OpenOptions<PrivateKey>): Promise<SealedContent>;
  fingerprint(publicKey: Uint8Array): Promise<string>;
}

const utf8 = new TextEncoder();
// Invalid UTF-8 throws; a byte-order mark is kept, so JSON.parse refuses it as it refuses any stray byte.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function plaintextOf(content: SealedContent): Uint8Array {
  const parsed = sealedContent.safeParse(content);
  if (!parsed.success)
    throw new SealedInputError('content must be { content: string, attachmentIds?: string[] }');
  const { content: text, attachmentIds } = parsed.data;
  const json = attachmentIds === undefined ? { content: text } : { content: text, attachmentIds };
  const bytes = utf8.encode(JSON.stringify(json));
  if (bytes.length + GCM_TAG_BYTES > MAX_SEALED_CIPHERTEXT_BYTES) {
    throw new SealedInputError(`sealed content is over ${MAX_SEALED_CIPHERTEXT_BYTES - GCM_TAG_BYTES} bytes`);
  }
  return bytes;
}

export function contentOf(plaintext: Uint8Array): SealedContent {
  try {
    return sealedContent.parse(JSON.parse(strictUtf8.decode(plaintext)));
  } catch {
    throw new SealedOpenError();
  }
}

/** "oan-sealed-v1" LF base64url(E) LF conversationId LF senderAccountId. */
export const contentAad = (ephemeralKey: string, conversationId: string, senderAccountId: string) =>
  utf8.encode(`${SEALED_ALG}\n${ephemeralKey}\n${conversationId}\n${senderAccountId}`);

/** "oan-sealed-v1 wrap" LF accountId LF keyId. */
export const wrapInfo = (accountId: string, keyId: string) =>
  utf8.encode(`${SEALED_ALG} wrap\n${accountId}\n${keyId}`);

// A line feed inside an id would let two different (conversation, sender) pairs share one AAD.
const id = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\n]*$/);
const accountId = sealedRecipient.shape.accountId.regex(/^[^\n]*$/);
const keyId = sealedRecipient.shape.keyId;

function check<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new SealedInputError(`${what} is not valid`);
  return parsed.data;
}

export function checkKeyBytes(key: unknown, what = 'publicKey'): Uint8Array {
  if (!(key instanceof Uint8Array) || key.length !== X25519_KEY_BYTES) {
    throw new SealedInputError(`${what} must be ${X25519_KEY_BYTES} bytes`);
  }
  return key;
}

export function checkSealOptions(options: SealOptions): void {
  check(id, options.conversationId, 'conversationId');
  check(accountId, options.senderAccountId, 'senderAccountId');
  const { recipients } = options;
  if (!Array.isArray(recipients) || recipients.length < 1 || recipients.length > MAX_SEALED_RECIPIENTS) {
    throw new SealedInputError(`recipients must list 1 to ${MAX_SEALED_RECIPIENTS} keys`);
  }
  const seen = new Set<string>();
  for (const r of recipients) {
    check(accountId, r.accountId, 'a recipient accountId');
    check(keyId, r.keyId, 'a recipient keyId');
    checkKeyBytes(r.publicKey, `the public key of ${r.keyId}`);
    const pair = `${r.accountId}\n${r.keyId}`;
    if (seen.has(pair)) throw new SealedInputError(`recipient ${r.keyId} of ${r.accountId} is listed twice`);
    seen.add(pair);
  }
}

export function checkOpenOptions(options: OpenOptions<unknown>): void {
  check(id, options.conversationId, 'conversationId');
  check(accountId, options.senderAccountId, 'senderAccountId');
  check(accountId, options.myAccountId, 'myAccountId');
  check(keyId, options.keyId, 'keyId');
}

const platformRandom: Random = (length) => globalThis.crypto.getRandomValues(new Uint8Array(length));

/** The random source of one seal, checked to give exactly the bytes asked for. */
export function randomSource(random: Random = platformRandom): Random {
  return (length) => {
    const bytes = random(length);
    if (!(bytes instanceof Uint8Array) || bytes.length !== length) {
      throw new SealedInputError(`random(${length}) must return ${length} bytes`);
    }
    return bytes;
  };
}

/** The parts of an envelope one reader needs, decoded; anything amiss is a `SealedOpenError`. */
export interface ReaderParts {
  /** base64url(E) as sent, which the AAD is made of. */
  ephemeralKeyText: string;
  ephemeralKey: Uint8Array;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
  wrapNonce: Uint8Array;
  wrappedKey: Uint8Array;
}

export function readerParts(envelope: unknown, myAccountId: string, myKeyId: string): ReaderParts {
  const parsed = sealedEnvelope.safeParse(envelope);
  if (!parsed.success) throw new SealedOpenError();
  const mine = parsed.data.recipients.filter((r) => r.accountId === myAccountId && r.keyId === myKeyId);
  const entry = mine[0];
  if (entry === undefined || mine.length > 1) throw new SealedOpenError();
  const { ephemeralKey, nonce, ciphertext } = parsed.data;
  return {
    ephemeralKeyText: ephemeralKey,
    ephemeralKey: fromBase64url(ephemeralKey),
    nonce: fromBase64url(nonce),
    ciphertext: fromBase64url(ciphertext),
    wrapNonce: fromBase64url(entry.nonce),
    wrappedKey: fromBase64url(entry.wrappedKey),
  };
}

/** An X25519 result of all zeros means a low-order public key: refused (RFC 7748 §6.1). */
export const isAllZero = (bytes: Uint8Array) => bytes.every((b) => b === 0);

/** Lower-case hex of the first 20 bytes of SHA-256(public key), in ten groups of four. */
export function fingerprintText(digest: Uint8Array): string {
  return (toHex(digest.subarray(0, 20)).match(/.{4}/g) ?? []).join(' ');
}
