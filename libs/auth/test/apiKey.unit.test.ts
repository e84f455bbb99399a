import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, isApiKey } from '../src/index.ts';

describe('a generated API key', () => {
  it('is gofers_ + 43 base64url characters the adapter can recover from pasted text', () => {
    for (let i = 0; i < 200; i++) {
      const key = generateApiKey();
      expect(key).toMatch(/^gofers_[A-Za-z0-9_-]{43}$/);
      expect(/gofers_[A-Za-z0-9_-]+/.exec(`paste: ${key}.`)?.[0]).toBe(key);
      expect(isApiKey(key)).toBe(true);
    }
  });

  it('is unique and hashed as sha256 hex', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
    expect(keys.size).toBe(1000);
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashApiKey('gofers_abc')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('gofers_abc')).not.toBe(hashApiKey('gofers_abd'));
  });
});
