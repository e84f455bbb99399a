import { describe, expect, it } from 'vitest';
import { ConfigError } from '@oan/config';
import { loadAuthConfig } from '../src/config.ts';
import { afterFailure, classifyAddress, refuseAddress, refuseUrl, retryDelayMs } from '@oan/webhooks';

const strict = { allowLoopback: false };
const qa = { allowLoopback: true };

describe('the address classes a webhook is never sent to', () => {
  it.each([
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['ff02::1', 'reserved'],
    ['64:ff9b::a00:1', 'reserved'],
    ['64:ff9b::8.8.8.8', 'reserved'],
    ['64:ff9b:1::a00:1', 'reserved'],
    ['64:ff9b:1:ffff::1', 'reserved'],
    ['::10.0.0.1', 'reserved'],
    ['::8.8.8.8', 'reserved'],
    ['::a00:1', 'reserved'],
    ['fec0::1', 'private'],
    ['feff:ffff::1', 'private'],
    ['2002:a00:1::1', 'reserved'],
    ['2002:808:808::1', 'reserved'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'],
    ['not-an-address', 'reserved'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address)).toBe(cls);
    expect(refuseAddress(address, strict)).toContain(cls);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '2001:4860:4860::8888',
    '2003::1',
    '64:ff9c::1',
  ])('%s is public', (a) => {
    expect(classifyAddress(a)).toBeNull();
    expect(refuseAddress(a, strict)).toBeNull();
  });

  it('never names the refused address in the reason (a delivery error is shown to the account)', () => {
    for (const a of ['10.1.2.3', '169.254.169.254', '::ffff:10.0.0.1', 'fd12:3456::1', '2002:a00:1::1']) {
      const reason = refuseAddress(a, strict)!;
      expect(reason, a).toMatch(/^address not allowed \([a-z-]+\)$/);
      expect(reason, a).not.toContain(a);
    }
  });

  it('allows loopback, and only loopback, with the QA switch', () => {
    expect(refuseAddress('127.0.0.1', qa)).toBeNull();
    expect(refuseAddress('::1', qa)).toBeNull();
    for (const a of ['10.0.0.1', '169.254.169.254', '192.168.0.1', 'fe80::1'])
      expect(refuseAddress(a, qa)).not.toBeNull();
  });
});

describe('a URL at registration', () => {
  it('must be https without the QA switch, and may be http with it', () => {
    expect(refuseUrl('https://hooks.example.com/oan', strict)).toBeNull();
    expect(refuseUrl('http://hooks.example.com/oan', strict)).toMatch(/https/);
    expect(refuseUrl('http://127.0.0.1:9000/oan', qa)).toBeNull();
    expect(refuseUrl('ftp://hooks.example.com/oan', qa)).not.toBeNull();
  });

  it('may not name a refused address, localhost or the metadata host, nor carry credentials', () => {
    for (const u of [
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://10.0.0.8/x',
      'https://169.254.169.254/latest',
      'https://[fe80::1]/x',
      'https://[::10.0.0.1]/x',
      'https://[64:ff9b:1::a00:1]/x',
      'https://[fec0::1]/x',
      'https://[2002:a00:1::1]/x',
      'https://localhost/x',
      'https://api.localhost/x',
      'https://metadata.google.internal/x',
      'https://user:pass@hooks.example.com/x',
      'not a url',
    ]) {
      expect(refuseUrl(u, strict), u).not.toBeNull();
    }
    expect(refuseUrl('https://10.0.0.8/x', qa)).not.toBeNull();
  });
});

describe('the QA switch in production', () => {
  it('is refused at start', () => {
    const env = { JWT_SECRET: 's'.repeat(32), ID_SECRET: 'i'.repeat(32), WEBHOOK_ALLOW_LOOPBACK: 'true' };
    expect(loadAuthConfig(env).WEBHOOK_ALLOW_LOOPBACK).toBe(true);
    expect(() => loadAuthConfig({ ...env, NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(loadAuthConfig({ JWT_SECRET: 's'.repeat(32), ID_SECRET: 'i'.repeat(32) })).toMatchObject({
      WEBHOOK_DELIVERY: true,
      WEBHOOK_ALLOW_LOOPBACK: false,
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_GIVE_UP_MS: 86_400_000,
    });
  });
});

describe('the retry schedule', () => {
  const s = { baseMs: 5_000, maxMs: 7_200_000, giveUpMs: 86_400_000 };

  it('doubles from the base up to the cap, jittered within its upper half', () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, s, () => 1))).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(retryDelayMs(1, s, () => 0)).toBe(2_500);
    expect(retryDelayMs(30, s, () => 1)).toBe(7_200_000);
    expect(retryDelayMs(1000, s, () => 0.5)).toBe(5_400_000);
  });

  it('gives up once the period has passed, and never schedules a retry after it', () => {
    const since = new Date('2026-12-01T00:00:00Z');
    const at = (ms: number) => new Date(since.getTime() + ms);
    expect(afterFailure(1, since, since, s, () => 1)).toEqual({ kind: 'retry', at: at(5_000) });
    expect(afterFailure(20, since, at(86_000_000), s, () => 1)).toEqual({
      kind: 'retry',
      at: at(86_400_000),
    });
    expect(afterFailure(21, since, at(86_400_000), s)).toEqual({ kind: 'give-up' });
  });
});
