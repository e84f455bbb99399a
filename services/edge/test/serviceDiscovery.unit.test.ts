import { afterEach, describe, expect, it } from 'vitest';
import { loadEdgeConfig } from '../src/config.ts';
import { ServiceReplicas } from '../src/upstreams.ts';

const made: ServiceReplicas[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((s) => s.close()));
});

/** A compose network the test sets: the addresses of `auth`, and which of them answer /health. */
function fakeNetwork(urls = ['http://auth:8181']) {
  const net = {
    addresses: ['10.0.0.2', '10.0.0.3'],
    healthy: new Set(['10.0.0.2', '10.0.0.3']),
    fail: false,
  };
  const service = new ServiceReplicas(urls, {
    resolveMs: 0,
    resolve: async (host) => {
      expect(host).toBe('auth');
      if (net.fail) throw new Error('EAI_AGAIN');
      return [...net.addresses];
    },
    probe: async (url) => (net.healthy.has(new URL(url).hostname) ? {} : undefined),
  });
  made.push(service);
  return { net, service };
}

describe('a service found by its name (docker-compose --scale auth=N)', () => {
  it('sends to the name until the first lookup, then to every replica that answers', async () => {
    const { service } = fakeNetwork();
    expect(service.members()).toEqual(['http://auth:8181']);
    await service.refresh();
    expect([...service.members()].sort()).toEqual(['http://10.0.0.2:8181', 'http://10.0.0.3:8181']);
    expect(new Set([service.next(), service.next()])).toEqual(
      new Set(['http://10.0.0.2:8181', 'http://10.0.0.3:8181']),
    );
  });

  it('takes a new replica in once it answers, and drops one that left the name or stopped answering', async () => {
    const { net, service } = fakeNetwork();
    await service.refresh();
    net.addresses.push('10.0.0.4');
    await service.refresh();
    expect(service.members()).not.toContain('http://10.0.0.4:8181');
    net.healthy.add('10.0.0.4');
    await service.refresh();
    expect(service.members()).toContain('http://10.0.0.4:8181');
    net.addresses = ['10.0.0.2', '10.0.0.4'];
    net.healthy.delete('10.0.0.4');
    await service.refresh();
    expect(service.members()).toEqual(['http://10.0.0.2:8181']);
  });

  it('keeps what it knew when a lookup fails, and stands in with the name when none answers', async () => {
    const { net, service } = fakeNetwork();
    await service.refresh();
    net.fail = true;
    await service.refresh();
    expect(service.members()).toHaveLength(2);
    net.fail = false;
    net.healthy.clear();
    await service.refresh();
    expect(service.members()).toEqual(['http://auth:8181']);
  });

  it('takes a list of addresses as they are, each a replica', async () => {
    const service = new ServiceReplicas(['http://127.0.0.1:8181', 'http://127.0.0.1:8281'], {
      probe: async (url) => (url.endsWith(':8281') ? undefined : {}),
    });
    made.push(service);
    expect([...service.members()].sort()).toEqual(['http://127.0.0.1:8181', 'http://127.0.0.1:8281']);
    await service.refresh();
    expect(service.members()).toEqual(['http://127.0.0.1:8181']);
  });
});

describe('service URLs in the edge configuration', () => {
  it('take one URL or several, each without its trailing slash', () => {
    const c = loadEdgeConfig({ AUTH_URL: 'http://a:8181/, http://b:8181', GOFERS_URL: 'http://gofers:8182' });
    expect(c.AUTH_URL).toEqual(['http://a:8181', 'http://b:8181']);
    expect(c.GOFERS_URL).toEqual(['http://gofers:8182']);
    expect(loadEdgeConfig({ GOFERS_URL: '' }).GOFERS_URL).toBeUndefined();
    expect(() => loadEdgeConfig({ AUTH_URL: 'http://a:8181,ftp://b' })).toThrow(/AUTH_URL/);
  });
});
