import { describe, expect, it } from 'vitest';
import { WatchedAccounts } from './watched.ts';

describe('WatchedAccounts', () => {
  it('lets every account through until read, then only those read, and reads again once stale', async () => {
    let now = 1_000;
    let reads = 0;
    let accounts = ['a'];
    const watched = new WatchedAccounts(
      () => {
        reads += 1;
        return Promise.resolve(accounts);
      },
      500,
      () => now,
    );
    expect([watched.mayHaveWork('a'), watched.mayHaveWork('b')]).toEqual([true, true]);
    await watched.refresh();
    expect([watched.mayHaveWork('a'), watched.mayHaveWork('b')]).toEqual([true, false]);
    // An endpoint of b is made: not seen before the set is maxAgeMs old.
    accounts = ['a', 'b'];
    now += 499;
    await watched.refresh();
    expect([reads, watched.mayHaveWork('b')]).toEqual([1, false]);
    now += 1;
    await watched.refresh();
    expect([reads, watched.mayHaveWork('b')]).toEqual([2, true]);
  });

  it('keeps the last set when a read fails', async () => {
    let fail = false;
    const watched = new WatchedAccounts(
      () => (fail ? Promise.reject(new Error('database down')) : Promise.resolve(['a'])),
      0,
    );
    await watched.refresh();
    fail = true;
    await expect(watched.refresh()).rejects.toThrow('database down');
    expect([watched.mayHaveWork('a'), watched.mayHaveWork('b')]).toEqual([true, false]);
  });
});
