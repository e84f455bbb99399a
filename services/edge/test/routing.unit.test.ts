import { describe, expect, it } from 'vitest';
import { loadEdgeConfig } from '../src/config.ts';
import { GatewayPool } from '../src/gateways.ts';
import { UPLOAD_BODY_LIMIT } from '@oan/http';
import { API_ROUTES, bodyLimitFor } from '../src/routes.ts';

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

describe('body limits by route', () => {
  const route = (prefix: string) => API_ROUTES.find((r) => r.prefix === prefix)!;

  it("holds JSON routes to their owner's limit", () => {
    expect(bodyLimitFor(route('/api/v1/auth'), '/api/v1/auth/oan/email/request-code')).toBe(16 * 1024);
    expect(bodyLimitFor(route('/api/v1/threads'), '/api/v1/threads/t1/messages')).toBe(16 * 1024);
    expect(bodyLimitFor(route('/api/v1/gofers'), '/api/v1/gofers/g1')).toBe(256 * 1024);
    expect(bodyLimitFor(route('/api/v1/conversations'), '/api/v1/conversations/c1/messages')).toBe(
      256 * 1024,
    );
  });

  it('gives the upload paths 10 MiB plus multipart overhead, whatever the query', () => {
    expect(UPLOAD_BODY_LIMIT).toBe(10 * 1024 * 1024 + 64 * 1024);
    for (const [prefix, path] of [
      ['/api/v1/gofers', '/api/v1/gofers/g1/attachments'],
      ['/api/v1/gofers', '/api/v1/gofers/g1/photos?width=3'],
      ['/api/v1/conversations', '/api/v1/conversations/c1/attachments?kind=photo'],
    ] as const) {
      expect(bodyLimitFor(route(prefix), path)).toBe(UPLOAD_BODY_LIMIT);
    }
  });

  it('keeps the JSON limit for a non-multipart body to an upload path', () => {
    const gofers = route('/api/v1/gofers');
    expect(bodyLimitFor(gofers, '/api/v1/gofers/g1/photos', 'application/json')).toBe(256 * 1024);
    expect(bodyLimitFor(gofers, '/api/v1/gofers/g1/photos', '')).toBe(256 * 1024);
    expect(bodyLimitFor(gofers, '/api/v1/gofers/g1/photos', 'multipart/form-data; boundary=x')).toBe(
      UPLOAD_BODY_LIMIT,
    );
  });

  it('does not stretch the limit to paths that merely contain an upload segment', () => {
    const conversations = route('/api/v1/conversations');
    for (const path of [
      '/api/v1/conversations/c1/attachments/a1/url',
      '/api/v1/conversations/attachments',
      '/api/v1/conversations/c1/messages?next=/attachments',
    ]) {
      expect(bodyLimitFor(conversations, path)).toBe(256 * 1024);
    }
  });
});
