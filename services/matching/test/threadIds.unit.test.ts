import { describe, expect, it } from 'vitest';
import { threadIdFor } from '../src/commands/threadIds.ts';
import { legacyThreadIdFor } from './legacyIds.ts';

const SECRET = 'matching-unit-id-secret-matching-unit';

describe('the id of a new pair’s thread', () => {
  it('is one UUIDv8 per pair under one secret, whichever Gofer comes first', () => {
    const id = threadIdFor(SECRET, 'g-a', 'g-b');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(threadIdFor(SECRET, 'g-b', 'g-a')).toBe(id);
    expect(threadIdFor(SECRET, 'g-a', 'g-c')).not.toBe(id);
  });

  it('cannot be computed from the two goferIds alone: another secret gives another id', () => {
    expect(threadIdFor(`${SECRET}-other`, 'g-a', 'g-b')).not.toBe(threadIdFor(SECRET, 'g-a', 'g-b'));
  });

  it('is not the UUIDv5 of the pair under the public namespace that ids used to be', () => {
    // The id the previous derivation gave this pair (recorded from it), so the comparison is real.
    expect(legacyThreadIdFor('g-b', 'g-a')).toBe('15b20053-1196-5be4-9eb9-e73f29ab1bcc');
    expect(threadIdFor(SECRET, 'g-a', 'g-b')).not.toBe(legacyThreadIdFor('g-a', 'g-b'));
  });
});
