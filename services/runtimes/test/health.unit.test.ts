import { describe, expect, it } from 'vitest';
import { ConfigError } from '@oan/config';
import { loadRuntimesConfig } from '../src/config.ts';
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

describe('the endpoint settings at start', () => {
  const env = { JWT_SECRET: 's'.repeat(32) };
  it('default to https and public addresses, with the documented thresholds', () => {
    expect(loadRuntimesConfig(env)).toMatchObject({
      RUNTIMES_DISPATCH: true,
      RUNTIMES_ALLOW_LOOPBACK: false,
      RUNTIMES_DISPATCH_TIMEOUT_MS: 10_000,
      RUNTIMES_UNHEALTHY_AFTER: 3,
      RUNTIMES_DISABLE_AFTER: 10,
    });
  });
  it('refuse the QA switch in production, and a disable threshold below the unhealthy one', () => {
    expect(loadRuntimesConfig({ ...env, RUNTIMES_ALLOW_LOOPBACK: 'true' }).RUNTIMES_ALLOW_LOOPBACK).toBe(
      true,
    );
    expect(() =>
      loadRuntimesConfig({ ...env, RUNTIMES_ALLOW_LOOPBACK: 'true', NODE_ENV: 'production' }),
    ).toThrow(ConfigError);
    expect(() =>
      loadRuntimesConfig({ ...env, RUNTIMES_UNHEALTHY_AFTER: '5', RUNTIMES_DISABLE_AFTER: '4' }),
    ).toThrow(ConfigError);
  });
});
