import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fleetBundleDir,
  joinAccount,
  TestConnector,
  TestFleet,
  waitFor,
  type ProcessName,
} from '@oan/testing';
import { argvOf } from './support.ts';

/** One sample of the Prometheus text format: metric name, labels, value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
type Scrape = { types: Map<string, string>; samples: Sample[] };

function parse(text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]),
    );
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { types, samples };
}

let fleet: TestFleet;
/** Where a process's /metrics answer: its own port, or (the edge) a listener apart from the public origin. */
const port = (name: ProcessName) => {
  const spec = fleet.plan.processes.find((p) => p.name === name)!;
  return spec.metricsPort ?? spec.port;
};
async function scrape(name: ProcessName): Promise<Scrape> {
  const res = await fetch(`http://127.0.0.1:${port(name)}/metrics`);
  expect(res.status, `${name} /metrics`).toBe(200);
  return parse(await res.text());
}
const sum = (s: Scrape, name: string, where: (l: Record<string, string>) => boolean = () => true) =>
  s.samples.filter((x) => x.name === name && where(x.labels)).reduce((a, x) => a + x.value, 0);
const requests = (s: Scrape, route?: string) =>
  sum(s, 'http_request_duration_seconds_count', (l) => route === undefined || l.route === route);

const before = new Map<ProcessName, Scrape>();
let c: TestConnector;

beforeAll(async () => {
  fleet = await TestFleet.start();
  for (const p of fleet.plan.processes) before.set(p.name, await scrape(p.name));
  const acc = await joinAccount(fleet.url, fleet.mailbox, `metrics-${fleet.id}@example.com`);
  c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
  await c.connect();
  const created = await c.rest('POST', '/gofers', { locale: 'en' });
  expect(created.status).toBe(201);
  await waitFor(() => c.delivered.find((e) => e.type === 'gofer_message'), { what: 'the greeting envelope' });
});
afterAll(async () => {
  c?.close();
  await fleet?.stop();
});

describe('when a connector joined, opened a socket and created a Gofer', () => {
  it('every process serves the HTTP latency histogram and the Node default metrics', async () => {
    for (const p of fleet.plan.processes) {
      const s = await scrape(p.name);
      expect(s.types.get('http_request_duration_seconds'), p.name).toBe('histogram');
      expect(s.types.get('process_cpu_seconds_total'), p.name).toBe('counter');
      // sampled every 100 ms rather than 10 (ADR 0047), but still there
      expect(s.types.get('nodejs_eventloop_lag_p99_seconds'), p.name).toBe('gauge');
    }
  });

  it('the public origin does not serve the metrics', async () => {
    const res = await fetch(`${fleet.url}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('the request histograms moved on the processes the flow went through', async () => {
    const edge = await scrape('edge');
    expect(requests(edge)).toBeGreaterThan(requests(before.get('edge')!));
    const auth = await scrape('auth');
    expect(requests(auth, '/api/v1/auth/oan/email/verify')).toBe(1);
    const gofers = await scrape('gofers');
    expect(requests(gofers, '/api/v1/gofers')).toBeGreaterThanOrEqual(1);
    const gateways = [await scrape('gateway1'), await scrape('gateway2')];
    expect(gateways.reduce((a, s) => a + requests(s, '/api/v1/events/cursor'), 0)).toBe(1);
    expect(gateways.reduce((a, s) => a + requests(s, '/api/v1/events'), 0)).toBeGreaterThanOrEqual(1);
    const bucket = gofers.samples.find(
      (x) => x.name === 'http_request_duration_seconds_bucket' && x.labels.route === '/api/v1/gofers',
    );
    expect(bucket?.labels).toMatchObject({ method: 'POST', status_code: '201' });
  });

  it('the gateways count the open socket and the envelopes they emitted', async () => {
    const gateways = [await scrape('gateway1'), await scrape('gateway2')];
    expect(gateways.reduce((a, s) => a + sum(s, 'oan_gateway_sockets_connected'), 0)).toBe(1);
    expect(
      gateways.reduce((a, s) => a + sum(s, 'oan_gateway_envelopes_emitted_total'), 0),
    ).toBeGreaterThanOrEqual(c.pushes.length);
  });

  it('the projector reports its consumer lag per topic and partition, back to zero once caught up', async () => {
    const prefix = fleet.env.TOPIC_PREFIX!;
    const s = await waitFor(async () => {
      const x = await scrape('projector');
      const lag = x.samples.filter((m) => m.name === 'oan_projector_consumer_lag');
      const stages = new Set(lag.map((m) => m.labels.stage));
      return stages.has('domain') && stages.has('oan') && lag.every((m) => m.value === 0) ? x : undefined;
    });
    const lag = s.samples.filter((m) => m.name === 'oan_projector_consumer_lag');
    expect(lag.map((m) => m.labels.topic)).toEqual(
      expect.arrayContaining([`${prefix}auth.events`, `${prefix}gofers.events`, `${prefix}oan.events`]),
    );
    for (const m of lag) expect(m.labels.partition).toMatch(/^\d+$/);
    expect(sum(s, 'oan_projector_domain_events_total')).toBeGreaterThan(0);
    expect(sum(s, 'oan_projector_envelopes_total')).toBeGreaterThanOrEqual(c.delivered.length);
  });

  it('the reactors report their consumer lag per group, topic and partition too', async () => {
    const prefix = fleet.env.TOPIC_PREFIX!;
    // Each process's shared reactor group (ADR 0049) follows several topics: gofers.events, where
    // the new Gofer's events are, and auth.events, where its account's are.
    for (const [name, group] of [
      ['gofers', `${prefix}gofers.reactors`],
      ['matching', `${prefix}matching.reactors`],
    ] as const) {
      const topics = [`${prefix}auth.events`, `${prefix}gofers.events`];
      const lagOf = (x: Awaited<ReturnType<typeof scrape>>) =>
        x.samples.filter((m) => m.name === 'oan_consumer_lag' && m.labels.group === group);
      const s = await waitFor(async () => {
        const x = await scrape(name);
        const seen = new Set(lagOf(x).map((m) => m.labels.topic));
        return topics.every((t) => seen.has(t)) ? x : undefined;
      });
      const lag = lagOf(s);
      expect([...new Set(lag.map((m) => m.labels.topic))].sort(), name).toEqual(
        expect.arrayContaining(topics),
      );
      for (const m of lag) expect(m.labels.partition).toMatch(/^\d+$/);
      expect(lag.every((m) => m.value >= 0)).toBe(true);
    }
  });

  it('the outbox publisher reports the outbox backlog per event store, drained, and what it published', async () => {
    const s = await waitFor(async () => {
      const x = await scrape('outbox');
      return sum(x, 'oan_outbox_backlog') === 0 ? x : undefined;
    });
    const schemas = s.samples.filter((m) => m.name === 'oan_outbox_backlog').map((m) => m.labels.schema);
    expect(schemas).toEqual(expect.arrayContaining(['auth', 'gofers']));
    expect(sum(s, 'oan_outbox_published_total', (l) => l.schema === 'auth')).toBeGreaterThan(
      sum(before.get('outbox')!, 'oan_outbox_published_total', (l) => l.schema === 'auth'),
    );
    expect(sum(s, 'oan_outbox_published_total', (l) => l.schema === 'gofers')).toBeGreaterThanOrEqual(2);
  });
});

describe('the form the processes run in (ADR 0048)', () => {
  const bundles = fleetBundleDir();
  it.runIf(bundles)("every process runs the e2e run's bundle of its service", () => {
    for (const p of fleet.running.values()) {
      expect(argvOf(p.child.pid!), p.spec.name).toContain(join(bundles!, `${p.spec.kind}.mjs`));
    }
  });
});
