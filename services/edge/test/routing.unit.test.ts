import { describe, expect, it } from 'vitest';
import { loadEdgeConfig } from '../src/config';
import { GatewayPool } from '../src/gateways';

describe('GatewayPool', () => {
  const pool = () => new GatewayPool(['http://a', 'http://b', 'http://c']);

  it('spreads requests without a session round robin', () => {
    const p = pool();
    expect([p.next(), p.next(), p.next(), p.next()]).toEqual([
      'http://a',
      'http://b',
      'http://c',
      'http://a',
    ]);
  });

  it('sends a session to the gateway named by its sid prefix (g<i+1> by default)', () => {
    const p = pool();
    expect(p.forSession('g2.AbC-_x')).toBe('http://b');
    expect(p.forSession('g3.x')).toBe('http://c');
    expect(p.forSession('g1.x')).toBe('http://a');
  });

  it('falls back to round robin for a missing, foreign or malformed sid', () => {
    const p = pool();
    expect([
      p.forSession(undefined),
      p.forSession('g9.x'),
      p.forSession('.x'),
      p.forSession(['g1.x']),
    ]).toEqual(['http://a', 'http://b', 'http://c', 'http://a']);
  });

  it('uses explicit ids when given', () => {
    const p = new GatewayPool(['http://a', 'http://b'], ['east', 'west']);
    expect(p.forSession('west.x')).toBe('http://b');
  });
});

describe('edge configuration', () => {
  it('splits GATEWAY_URLS and trims trailing slashes', () => {
    const c = loadEdgeConfig({ GATEWAY_URLS: 'http://a:1/, http://b:2' });
    expect(c.GATEWAY_URLS).toEqual(['http://a:1', 'http://b:2']);
    expect(c.ENABLE_OPEN_API).toBe(false);
    expect(c.GOFERS_URL).toBeUndefined();
  });

  it('refuses GATEWAY_IDS that do not match GATEWAY_URLS one to one', () => {
    expect(() => loadEdgeConfig({ GATEWAY_URLS: 'http://a,http://b', GATEWAY_IDS: 'g1' })).toThrow(
      /GATEWAY_IDS/,
    );
    expect(() => loadEdgeConfig({ GATEWAY_URLS: 'http://a,http://b', GATEWAY_IDS: 'g1,g1' })).toThrow(
      /GATEWAY_IDS/,
    );
    expect(() => loadEdgeConfig({ GATEWAY_URLS: 'ftp://a' })).toThrow(/GATEWAY_URLS/);
  });
});
