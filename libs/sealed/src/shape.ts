import { z } from 'zod';

/**
 * The wire shape of a sealed message (`oan-sealed-v1`, docs/sealed-messages.md). The server checks
 * only this shape and these sizes; it never holds a key that opens the content.
 */

export const SEALED_ALG = 'oan-sealed-v1';
/** Decoded bytes of the content's ciphertext (AES-256-GCM output, its 16-byte tag included). */
export const MAX_SEALED_CIPHERTEXT_BYTES = 40_000;
export const MIN_SEALED_CIPHERTEXT_BYTES = 17;
export const MAX_SEALED_RECIPIENTS = 32;
/** Current (unretired) device keys one account may have. */
export const MAX_DEVICE_KEYS = 8;
export const X25519_KEY_BYTES = 32;
export const GCM_NONCE_BYTES = 12;
/** A wrapped content key: 32 key bytes and the 16-byte tag. */
export const WRAPPED_KEY_BYTES = 48;

const B64URL = /^[A-Za-z0-9_-]*$/;
const B64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Bytes a base64url text (no padding) decodes to, or -1 when it is not canonical base64url. */
export function base64urlByteLength(text: string): number {
  const rest = text.length % 4;
  if (!B64URL.test(text) || rest === 1) return -1;
  if (rest !== 0) {
    // Canonical only: the last character's bits past the final byte are zero.
    const last = B64URL_ALPHABET.indexOf(text[text.length - 1] ?? '');
    if ((last & (rest === 2 ? 0b1111 : 0b11)) !== 0) return -1;
  }
  return Math.floor((text.length * 3) / 4);
}

const bytesOf = (label: string, min: number, max = min) =>
  z
    .string()
    .max(Math.ceil((max * 4) / 3) + 4)
    .refine(
      (t) => {
        const n = base64urlByteLength(t);
        return n >= min && n <= max;
      },
      min === max
        ? `${label} must be base64url (no padding) of ${min} bytes`
        : `${label} must be base64url (no padding) of ${min} to ${max} bytes`,
    );

export const sealedRecipient = z.strictObject({
  accountId: z.string().min(1).max(64),
  keyId: z.uuid(),
  nonce: bytesOf('nonce', GCM_NONCE_BYTES),
  wrappedKey: bytesOf('wrappedKey', WRAPPED_KEY_BYTES),
});

export const sealedEnvelope = z.strictObject({
  alg: z.literal(SEALED_ALG),
  ephemeralKey: bytesOf('ephemeralKey', X25519_KEY_BYTES),
  nonce: bytesOf('nonce', GCM_NONCE_BYTES),
  ciphertext: bytesOf('ciphertext', MIN_SEALED_CIPHERTEXT_BYTES, MAX_SEALED_CIPHERTEXT_BYTES),
  recipients: z.array(sealedRecipient).min(1).max(MAX_SEALED_RECIPIENTS),
});
export type SealedEnvelope = z.infer<typeof sealedEnvelope>;
export type SealedRecipient = z.infer<typeof sealedRecipient>;

/** A device public key as published: base64url of 32 bytes. */
export const devicePublicKey = bytesOf('publicKey', X25519_KEY_BYTES);
