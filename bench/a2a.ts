/**
 * Gofers as A2A agents (docs/a2a.md, ADR 0035): round trips per second and latency of one caller
 * turn, send → completed reply, with the scripted brain, beside the same turn through the
 * ConnectOnion relay and a raw HTTP echo, in one run on loopback. CALLERS concurrent callers share
 * ROUND_TRIPS between them; caller c talks to Gofer c mod GOFERS, so the per-Gofer figures show
 * whether turns of one Gofer queue. Paths:
 *   - A2A: the unmodified @a2a-js/sdk 1.3.0 client through the edge, `SendMessage` (blocking) → a
 *     `completed` task; each caller its own bearer token and one context (a conversation);
 *   - relay: the npm `connectonion` client through the edge, one session (one key) per caller,
 *     INPUT → OUTPUT;
 *   - raw node:http echo and raw Fastify echo on loopback: a POST of the A2A request's bytes
 *     answered with the A2A reply's bytes, driven by the same `fetch` (undici) the SDK uses.
 * The A2A and relay budgets (per caller, per address, per Gofer, per owner) are raised for the run.
 * Each caller's first turn is a warm-up (connection, card, session) outside the clock. Usage:
 *   bash infra/node.sh node bench/a2a.ts [roundTrips=2000] [callers=8] [gofers=2]
 * Prints the fleet's CPU per A2A and per relay round trip (bench/cost.ts). Writes docs/bench/a2a.json,
 * docs/bench/a2a.svg and docs/bench/a2a-cost.json.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { connect, address as coAddress, type RemoteAgent } from 'connectonion';
import { Role, TaskState, type Message, type SendMessageRequest, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { joinAccount, TestConnector, TestFleet } from '@oan/testing';
import { saveChart } from './chart.ts';
import { costMeter, loadAverage as load } from './cost.ts';
import { fmt, percentiles } from './stats.ts';

const ROUND_TRIPS = Number(process.argv[2] ?? 2000);
const CALLERS = Number(process.argv[3] ?? 8);
const GOFERS = Number(process.argv[4] ?? 2);
if (!(ROUND_TRIPS >= CALLERS && CALLERS >= 1 && GOFERS >= 1))
  throw new Error('usage: bench/a2a.ts [roundTrips >= callers] [callers >= 1] [gofers >= 1]');

const loadBefore = load();

/** A caller's words: the same length every turn, and nothing the Gofer would ask its owner about. */
const words = (caller: number, i: number) =>
  `Hello from bench caller ${caller}, turn ${i}: who are you and what do you do?`.padEnd(100, '.');

interface Caller {
  gofer: number;
  /** One round trip; throws when it is not answered as it should be. */
  trip(i: number): Promise<void>;
  close?(): void;
}

interface Outcome {
  ms: number;
  /** The fleet's CPU per answered round trip, where the path goes through the fleet. */
  cpuMs?: number;
  laps: { ms: number; gofer: number }[];
  failures: Map<string, number>;
}

/** Every caller at once, each looping its share of ROUND_TRIPS; a lap is one round trip. */
async function race(callers: Caller[]): Promise<Outcome> {
  const laps: Outcome['laps'] = [];
  const failures = new Map<string, number>();
  const t0 = performance.now();
  await Promise.all(
    callers.map(async (c, n) => {
      const share = Math.floor(ROUND_TRIPS / CALLERS) + (n < ROUND_TRIPS % CALLERS ? 1 : 0);
      for (let i = 1; i <= share; i++) {
        const start = performance.now();
        try {
          await c.trip(i);
          laps.push({ ms: performance.now() - start, gofer: c.gofer });
        } catch (err) {
          const why = (err as Error).message.slice(0, 80);
          failures.set(why, (failures.get(why) ?? 0) + 1);
        }
      }
    }),
  );
  const ms = performance.now() - t0;
  for (const c of callers) c.close?.();
  return { ms, laps, failures };
}

/** Retries a warm-up turn while the path settles (a Gofer announcing itself on the relay). */
async function warm(what: string, fn: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 40) throw new Error(`${what}: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

const textOf = (m: Message | undefined) =>
  (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

const message = (text: string, contextId: string): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId,
    taskId: '',
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text', value: text }, mediaType: 'text/plain', filename: '', metadata: undefined },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
});

/** The completed task of a `SendMessage` answer, or an error naming the state it ended in. */
function completed(result: unknown): Task {
  const r = result as { task?: Task } & Partial<Task>;
  const task = r.task ?? (r as Task);
  const state = task.status?.state;
  if (state !== TaskState.TASK_STATE_COMPLETED)
    throw new Error(
      `A2A task ${state === undefined ? 'without a state' : TaskState[state]}: ${textOf(task.status?.message)}`,
    );
  return task;
}

/** Any POST answered with `answer`: a bare node:http server on loopback. */
async function httpEcho(answer: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () =>
      res
        .writeHead(200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(answer),
        })
        .end(answer),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The same on Fastify with its defaults (the body parsed as JSON), as the services serve. */
async function fastifyEcho(answer: string): Promise<{ url: string; close: () => Promise<void> }> {
  const app = Fastify({ logger: false });
  app.post('/echo', async (_req, reply) => reply.header('content-type', 'application/json').send(answer));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/echo`,
    close: () => app.close(),
  };
}

/** CALLERS callers POSTing `body` to `url` with the global fetch, each awaiting the whole answer. */
function posters(url: string, body: string, answerBytes: number): Caller[] {
  return Array.from({ length: CALLERS }, () => ({
    gofer: 0,
    async trip() {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await res.text();
      if (res.status !== 200 || Buffer.byteLength(text) !== answerBytes)
        throw new Error(`echo answered ${res.status}, ${Buffer.byteLength(text)} bytes`);
    },
  }));
}

const fleet = await TestFleet.start({
  only: ['auth', 'gofers', 'outbox', 'projector', 'gateway1', 'gateway2', 'agents1', 'agents2', 'edge'],
  env: {
    LOG_LEVEL: 'warn',
    // Raised for the run: every caller is on 127.0.0.1, and the budgets would refuse a bench.
    GOFER_A2A_CALLER_PER_MINUTE: '10000',
    GOFER_A2A_ADDRESS_PER_MINUTE: '10000',
    GOFER_RELAY_INPUTS_PER_MINUTE: '10000',
    GOFER_RELAY_TURNS_PER_HOUR: '1000000',
    GOFER_RELAY_ACCOUNT_TURNS_PER_HOUR: '1000000',
    AGENTS_SOCKETS_PER_MINUTE: '1000000',
    AGENTS_CLIENT_FRAMES_PER_MINUTE: '1000000',
  },
});
const closers: (() => unknown)[] = [];
try {
  const acc = await joinAccount(fleet.url, fleet.mailbox, `a2a-bench-${fleet.id}@example.com`, 'dsh');
  const owner = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
  closers.push(() => owner.close());
  const gofers: { goferId: string; base: string; address: string }[] = [];
  for (let g = 0; g < GOFERS; g++) {
    const goferId = (await owner.rest<{ goferId: string }>('POST', '/gofers', {})).body.goferId;
    const a2a = await owner.rest('PUT', `/gofers/${goferId}/a2a`);
    const relay = await owner.rest<{ address: string }>('PUT', `/gofers/${goferId}/relay`);
    if (a2a.status !== 200 || relay.status !== 200)
      throw new Error(`publishing a Gofer: A2A ${a2a.status}, relay ${relay.status}`);
    gofers.push({ goferId, base: `${fleet.url}/a2a/gofers/${goferId}`, address: relay.body.address });
  }
  const edgeWs = fleet.url.replace('http://', 'ws://');

  // One A2A turn through a fetch that keeps the bytes: the raw echoes send and answer as many.
  let requestBody = '';
  let answerBody = '';
  const keeping: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (typeof init?.body === 'string' && init.method === 'POST') {
      requestBody = init.body;
      answerBody = await res.clone().text();
    }
    return res;
  };
  const sizing = await new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: keeping })],
    }),
  ).createFromUrl(`${gofers[0]!.base}/`);
  completed(
    await sizing.sendMessage(message(words(0, 0), ''), {
      serviceParameters: { Authorization: `Bearer bench-sizing-${randomUUID()}` },
    }),
  );
  if (!requestBody || !answerBody) throw new Error('the A2A request and its answer were not seen');
  const requestBytes = Buffer.byteLength(requestBody);
  const answerBytes = Buffer.byteLength(answerBody);

  const a2aCallers = async (): Promise<Caller[]> =>
    Promise.all(
      Array.from({ length: CALLERS }, async (_, c) => {
        const gofer = c % GOFERS;
        const client = await new ClientFactory().createFromUrl(`${gofers[gofer]!.base}/`);
        const opts = { serviceParameters: { Authorization: `Bearer bench-caller-${c}-${randomUUID()}` } };
        let contextId = '';
        await warm('A2A warm-up', async () => {
          contextId = completed(await client.sendMessage(message(words(c, 0), ''), opts)).contextId;
        });
        return {
          gofer,
          async trip(i: number) {
            completed(await client.sendMessage(message(words(c, i), contextId), opts));
          },
        };
      }),
    );
  const relayCallers = async (): Promise<Caller[]> =>
    Promise.all(
      Array.from({ length: CALLERS }, async (_, c) => {
        const gofer = c % GOFERS;
        const remote: RemoteAgent = connect(gofers[gofer]!.address, {
          relayUrl: edgeWs,
          keys: coAddress.generate(),
        });
        const turn = async (i: number) => {
          const r = await remote.input(words(c, i), { timeoutMs: 30_000 });
          if (!r.text) throw new Error('relay OUTPUT without text');
        };
        await warm('relay warm-up', () => turn(0));
        return { gofer, trip: turn, close: () => remote.reset() };
      }),
    );

  const http = await httpEcho(answerBody);
  closers.push(http.close);
  const fast = await fastifyEcho(answerBody);
  closers.push(fast.close);
  const rawCallers = async (url: string) => {
    const callers = posters(url, requestBody, answerBytes);
    await Promise.all(callers.map((c) => c.trip(0)));
    return callers;
  };

  console.log(
    `\n${ROUND_TRIPS} round trips, ${CALLERS} callers at once (${Math.floor(ROUND_TRIPS / CALLERS)}–` +
      `${Math.ceil(ROUND_TRIPS / CALLERS)} each, one after the other), scripted brain, loopback`,
  );
  console.log(
    `callers over Gofers: caller c talks to Gofer c mod ${GOFERS}, so ` +
      Array.from({ length: GOFERS }, (_, g) => {
        const n = Array.from({ length: CALLERS }, (_, c) => c).filter((c) => c % GOFERS === g).length;
        return `Gofer ${g + 1}: ${n} caller${n === 1 ? '' : 's'}`;
      }).join(', '),
  );
  console.log(`A2A request ${requestBytes} bytes, its answer ${answerBytes} bytes (the raw echoes' sizes)`);
  console.log(`load average before the run: ${loadBefore}`);

  // The raw echoes run in this process, beside an idle fleet: only the fleet's paths are metered.
  const meter = await costMeter(fleet);
  const metered = async (name: string, unit: string, callers: Caller[]) => {
    const { result, cost } = await meter.phase(
      name,
      () => race(callers),
      (o) => o.laps.length,
      unit,
    );
    return { ...result, cpuMs: cost.perUnit.cpuMs };
  };
  const results: [string, Outcome][] = [];
  results.push(['raw node:http echo (fetch)', await race(await rawCallers(http.url))]);
  results.push(['raw Fastify echo (fetch)', await race(await rawCallers(fast.url))]);
  results.push([
    'A2A SendMessage → completed, through the edge',
    await metered('a2a', 'A2A round trip', await a2aCallers()),
  ]);
  results.push([
    'relay INPUT → OUTPUT, through the edge',
    await metered('relay', 'relay round trip', await relayCallers()),
  ]);
  const loadAfter = load();

  const figures = results.map(([path, o]) => ({
    path,
    o,
    rate: (o.laps.length * 1000) / o.ms,
    p: percentiles(o.laps.map((l) => l.ms)),
  }));
  console.log('\n| path | answered | failed | round trips/s | p50 | p95 | p99 | max |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const { path, o, rate, p } of figures) {
    const failed = [...o.failures.values()].reduce((a, b) => a + b, 0);
    console.log(
      `| ${path} | ${o.laps.length} | ${failed} | ${rate.toFixed(0)} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${fmt(p.p99)} | ${fmt(p.max)} |`,
    );
  }
  const [raw, , a2a, relay] = figures as [
    (typeof figures)[number],
    (typeof figures)[number],
    (typeof figures)[number],
    (typeof figures)[number],
  ];
  const ratio = (name: string, f: typeof raw) =>
    console.log(
      `${name}/raw node:http: ${(f.rate / raw.rate).toFixed(3)}× the round trips/s, ` +
        `${(f.p.p50 / raw.p.p50).toFixed(1)}× the p50, ${(f.p.p99 / raw.p.p99).toFixed(1)}× the p99`,
    );
  console.log('');
  ratio('A2A', a2a);
  ratio('relay', relay);
  console.log(
    `A2A/relay: ${(a2a.rate / relay.rate).toFixed(2)}× the round trips/s, ${(a2a.p.p50 / relay.p.p50).toFixed(1)}× the p50`,
  );

  console.log(
    `\nper Gofer (${GOFERS} Gofers; run again with gofers=1, every caller on one Gofer, or gofers=callers, ` +
      'one caller each: a p50 that grows with the callers per Gofer means turns of one Gofer queue)',
  );
  console.log('| path | Gofer | callers | answered | p50 | p99 |');
  console.log('|---|---|---|---|---|---|');
  for (const f of [a2a, relay]) {
    for (let g = 0; g < GOFERS; g++) {
      const laps = f.o.laps.filter((l) => l.gofer === g).map((l) => l.ms);
      const p = percentiles(laps);
      const n = Array.from({ length: CALLERS }, (_, c) => c).filter((c) => c % GOFERS === g).length;
      console.log(
        `| ${f.path.split(' ')[0]} | ${g + 1} | ${n} | ${laps.length} | ${fmt(p.p50)} | ${fmt(p.p99)} |`,
      );
    }
  }
  for (const { path, o } of figures)
    for (const [why, n] of o.failures) console.log(`failed, ${path}: ${n} × ${why}`);
  console.log(`\nload average before the run: ${loadBefore}; after: ${loadAfter}`);

  const file = await saveChart(
    'a2a',
    figures.map(({ path, o, rate, p }) => ({
      path,
      roundTrips: ROUND_TRIPS,
      callers: CALLERS,
      gofers: GOFERS,
      answered: o.laps.length,
      failed: ROUND_TRIPS - o.laps.length,
      roundTripsPerSecond: Math.round(rate),
      p50: p.p50,
      p95: p.p95,
      p99: p.p99,
      max: p.max,
      ...(o.cpuMs === undefined ? {} : { cpuMsPerRoundTrip: o.cpuMs }),
      requestBytes,
      answerBytes,
      loadBefore,
      loadAfter,
    })),
    {
      title: `One caller turn, ${CALLERS} callers, ${ROUND_TRIPS} round trips (log scale)`,
      layer: [
        {
          mark: 'bar',
          encoding: {
            x: {
              field: 'roundTripsPerSecond',
              type: 'quantitative',
              title: 'round trips per second',
              scale: { type: 'log', domainMin: 1 },
            },
            x2: { datum: 1 },
            y: { field: 'path', type: 'nominal', title: null, sort: null, axis: { labelLimit: 360 } },
          },
        },
        {
          mark: { type: 'text', align: 'left', dx: 4 },
          encoding: {
            x: { field: 'roundTripsPerSecond', type: 'quantitative', scale: { type: 'log', domainMin: 1 } },
            y: { field: 'path', type: 'nominal', sort: null },
            text: { field: 'roundTripsPerSecond', format: ',' },
          },
        },
      ],
    },
  );
  console.log(`chart: ${file}`);
  console.log(`costs: ${meter.save('a2a')}`);
  if (figures.some(({ o }) => o.failures.size > 0)) {
    process.exitCode = 1;
    console.log('some round trips failed (above): the figures count answered round trips only');
  }
} finally {
  for (const close of closers.reverse()) await close();
  await fleet.stop();
}
