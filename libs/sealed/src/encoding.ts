import { base64urlnopad, hex } from '@scure/base';

/** base64url without padding (RFC 4648 §5), the encoding of every binary field of `oan-sealed-v1`. */
export const toBase64url = (bytes: Uint8Array): string => base64urlnopad.encode(bytes);

/** Canonical unpadded base64url only: padding, other letters or stray trailing bits throw. */
export const fromBase64url = (text: string): Uint8Array => base64urlnopad.decode(text);

export const toHex = (bytes: Uint8Array): string => hex.encode(bytes);
