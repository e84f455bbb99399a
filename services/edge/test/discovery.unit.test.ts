import { describe, expect, it } from 'vitest';
import { loadEdgeConfig } from '../src/config.ts';
import { GatewayPool, type GatewayProbe } from '../src/gateways.ts';

/** A DNS name whose addresses and replicas' /health the test sets (GATEWAY_DNS mode). */
function fakeNetwork() {
  const net = {
    addresses: ['10.0.0.2', '10.0.0.3'],
    /** address → the id its /health names; absent = not answering. */
    ids: new Map<string, string>([
      ['10.0.0.2', 'c0ffee000002'],
      ['10.0.0.3', 'c0ffee000003'],
    ]),
    lookups: 0,
    failLookup: false,
  };
  const probe: GatewayProbe = async (url) => {
    const id = net.ids.get(new URL(url).hostname);
    return id === undefined ? undefined : { status: 'ok', gatewayId: id };
  };
  const pool = GatewayPool.discover({
    host: 'gateway',
    port: 8191,
    resolveMs: 0,
    resolve: async (host) => {
      expect(host).toBe('gateway');
      net.lookups++;
      if (net.failLookup) throw new Error('EAI_AGAIN');
      return [...net.addresses];
    },
    probe,
  });
  return { net, pool };
}

describe('GatewayPool with GATEWAY_DNS (docker-compose --scale)', () => {
  it('sends to the name itself until the first lookup, then to every healthy replica round robin', async () => {
    const { pool } = fakeNetwork();
    expect(pool.next()).toBe('http://gateway:8191');
    await pool.refresh();
    expect(pool.members()).toEqual(['http://10.0.0.2:8191', 'http://10.0.0.3:8191']);
    expect([pool.next(), pool.next(), pool.next()]).toEqual([
      'http://10.0.0.2:8191',
      'http://10.0.0.3:8191',
      'http://10.0.0.2:8191',
    ]);
  });

  it('routes a sid to the replica whose /health names its prefix', async () => {
    const { pool } = fakeNetwork();
    await pool.refresh();
    expect(pool.forSession('c0ffee000003.AbC-_x')).toBe('http://10.0.0.3:8191');
    expect(pool.forSession('c0ffee000002.x')).toBe('http://10.0.0.2:8191');
    expect(pool.urlOf('c0ffee000003')).toBe('http://10.0.0.3:8191');
  });

  it('takes a new replica in once it answers healthy, and drops one that left the name', async () => {
    const { net, pool } = fakeNetwork();
    await pool.refresh();
    // Scaled to three: the new address resolves before its process is up.
    net.addresses.push('10.0.0.4');
    await pool.refresh();
    expect(pool.members()).not.toContain('http://10.0.0.4:8191');
    net.ids.set('10.0.0.4', 'c0ffee000004');
    await pool.refresh();
    expect(pool.members()).toContain('http://10.0.0.4:8191');
    expect(pool.forSession('c0ffee000004.x')).toBe('http://10.0.0.4:8191');
    // Scaled back down: the replica leaves the name, its id goes with it.
    net.addresses = ['10.0.0.2', '10.0.0.4'];
    await pool.refresh();
    expect(pool.members()).toEqual(['http://10.0.0.2:8191', 'http://10.0.0.4:8191']);
    expect(pool.urlOf('c0ffee000003')).toBeUndefined();
    const spread = new Set([pool.forSession('c0ffee000003.x'), pool.next(), pool.next()]);
    expect(spread).toEqual(new Set(['http://10.0.0.2:8191', 'http://10.0.0.4:8191']));
  });

  it('keeps a replica that stops answering but still resolves, out of the rotation until it answers', async () => {
    const { net, pool } = fakeNetwork();
    await pool.refresh();
    net.ids.delete('10.0.0.3');
    await pool.refresh();
    expect(pool.isUp('http://10.0.0.3:8191')).toBe(false);
    expect([pool.next(), pool.next()]).toEqual(['http://10.0.0.2:8191', 'http://10.0.0.2:8191']);
    net.ids.set('10.0.0.3', 'c0ffee000003');
    await pool.refresh();
    expect(pool.isUp('http://10.0.0.3:8191')).toBe(true);
  });

  it('moves an id to the address its replica now answers from (a container replaced in place)', async () => {
    const { net, pool } = fakeNetwork();
    await pool.refresh();
    net.ids.set('10.0.0.3', 'c0ffee000009');
    await pool.refresh();
    expect(pool.urlOf('c0ffee000003')).toBeUndefined();
    expect(pool.urlOf('c0ffee000009')).toBe('http://10.0.0.3:8191');
  });

  it('keeps what it knew when a lookup fails, and ignores a /health without a usable id', async () => {
    const { net, pool } = fakeNetwork();
    await pool.refresh();
    net.failLookup = true;
    await pool.refresh();
    expect(pool.members()).toHaveLength(2);
    net.failLookup = false;
    net.addresses.push('10.0.0.5');
    net.ids.set('10.0.0.5', 'not.an.id');
    await pool.refresh();
    expect(pool.members()).not.toContain('http://10.0.0.5:8191');
    expect(net.lookups).toBe(3);
  });
});

describe('GATEWAY_DNS', () => {
  it('parses <host>:<port> and refuses GATEWAY_IDS beside it', () => {
    expect(loadEdgeConfig({ GATEWAY_DNS: 'gateway:8191' }).GATEWAY_DNS).toEqual({
      host: 'gateway',
      port: 8191,
    });
    expect(loadEdgeConfig({ GATEWAY_DNS: '' }).GATEWAY_DNS).toBeUndefined();
    expect(() => loadEdgeConfig({ GATEWAY_DNS: 'http://gateway:8191' })).toThrow(/GATEWAY_DNS/);
    expect(() => loadEdgeConfig({ GATEWAY_DNS: 'gateway' })).toThrow(/GATEWAY_DNS/);
    expect(() => loadEdgeConfig({ GATEWAY_DNS: 'gateway:70000' })).toThrow(/GATEWAY_DNS/);
    expect(() => loadEdgeConfig({ GATEWAY_DNS: 'gateway:8191', GATEWAY_IDS: 'g1' })).toThrow(/GATEWAY_IDS/);
  });
});
