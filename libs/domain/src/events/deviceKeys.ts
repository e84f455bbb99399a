/**
 * The key directory of the direct channel (docs/sealed-messages.md), in the conversations event
 * store: one stream per account, `devicekeys-<accountId>`, keyed by that account. A key is an X25519
 * public key a client made; the server stores and shows it, and never holds a private half.
 */
export interface DeviceKeyPublished {
  accountId: string;
  /** A UUID the client picked; never reused by the account, even once retired. */
  keyId: string;
  /** base64url (no padding) of the 32 raw bytes. */
  publicKey: string;
  /** Lower-case hex of the first 20 bytes of SHA-256 over the raw key, ten groups of four. */
  fingerprint: string;
  publishedAt: string;
}

export interface DeviceKeyRetired {
  accountId: string;
  keyId: string;
  /** The retired key's fingerprint, so whoever is told of the change can show it. */
  fingerprint: string;
  retiredAt: string;
}

export type DeviceKeyEvent =
  | { type: 'DeviceKeyPublished'; data: DeviceKeyPublished }
  | { type: 'DeviceKeyRetired'; data: DeviceKeyRetired };

export const deviceKeysStreamId = (accountId: string) => `devicekeys-${accountId}`;
