import { describe, expect, it } from 'vitest';
import { echoes, pushAnswered, pushFailed, verified, type Health } from '../src/domain/health.ts';

const t = { unhealthyAfter: 3, disableAfter: 5 };
const active: Health = { state: 'active', consecutiveFailures: 0 };
const failTimes = (h: Health, n: number) =>
  Array.from({ length: n }).reduce<Health>((x) => pushFailed(x, t), h);

describe('an active endpoint, when pushes fail in a row', () => {
  it('stays active below the threshold, turns unhealthy at it, and disabled at the second', () => {
    expect(failTimes(active, 2)).toEqual({ state: 'active', consecutiveFailures: 2 });
    expect(failTimes(active, 3)).toEqual({ state: 'unhealthy', consecutiveFailures: 3 });
    expect(failTimes(active, 5)).toEqual({ state: 'disabled', consecutiveFailures: 5 });
  });
  it('is active again with no failures after one answered push', () => {
    expect(pushAnswered(failTimes(active, 4))).toEqual(active);
  });
});

describe('an endpoint that is not pushed to', () => {
  it.each(['unverified', 'disabled'] as const)('stays %s whatever a late push result says', (state) => {
    const h: Health = { state, consecutiveFailures: 5 };
    expect(pushFailed(h, t)).toEqual(h);
    expect(pushAnswered(h)).toEqual(h);
  });
  it('is active with no failures once verified, and unverified when the challenge fails', () => {
    expect(verified(true)).toEqual(active);
    expect(verified(false)).toEqual({ state: 'unverified', consecutiveFailures: 0 });
  });
});

describe('a challenge answer', () => {
  it('echoes only as a JSON object with the same challenge', () => {
    expect(echoes('{"challenge":"abc"}', 'abc')).toBe(true);
    expect(echoes('{"challenge":"abd"}', 'abc')).toBe(false);
    expect(echoes('"abc"', 'abc')).toBe(false);
    expect(echoes('abc', 'abc')).toBe(false);
    expect(echoes(undefined, 'abc')).toBe(false);
  });
});
