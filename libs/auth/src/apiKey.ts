import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_PREFIX } from '@oan/protocol';

/**
 * A connector API key: `gofers_` + 32 random bytes as base64url (43 chars). The tail stays
 * inside `[A-Za-z0-9_-]` because the adapter recovers keys from pasted text with that pattern.
 */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 hex: the only form of a key the server stores. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function isApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}
