import { describe, expect, it } from 'vitest';
import { keyedUuid } from '../src/keyedId.ts';

const SECRET = 'a-deployment-id-secret-of-32-characters';
const V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('a keyed id', () => {
  it('is one UUIDv8 per secret, purpose and input', () => {
    const id = keyedUuid(SECRET, 'oan/test/v1', 'ada@example.com');
    expect(id).toMatch(V8);
    expect(keyedUuid(SECRET, 'oan/test/v1', 'ada@example.com')).toBe(id);
  });

  it('changes with the secret, the purpose and the input', () => {
    const id = keyedUuid(SECRET, 'oan/test/v1', 'ada@example.com');
    expect(keyedUuid(`${SECRET}!`, 'oan/test/v1', 'ada@example.com')).not.toBe(id);
    expect(keyedUuid(SECRET, 'oan/other/v1', 'ada@example.com')).not.toBe(id);
    expect(keyedUuid(SECRET, 'oan/test/v1', 'bob@example.com')).not.toBe(id);
  });

  it('keeps the purpose and the input apart (no shifting of characters between them)', () => {
    expect(keyedUuid(SECRET, 'ab', 'c')).not.toBe(keyedUuid(SECRET, 'a', 'bc'));
    expect(() => keyedUuid(SECRET, 'a\0b', 'c')).toThrow(/NUL/);
  });
});
