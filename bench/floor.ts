/**
 * The floor under the fleet's CPU per command: what each kind of round trip a command makes costs on
 * this machine by itself, client and server together, with the clients the fleet uses and nothing
 * else running (no fleet). Each is run `ops` times with `concurrency` in flight:
 *   - a Postgres statement outside a transaction (a 500-byte jsonb insert, its own commit), and a
 *     primary-key select (node-postgres, a pool of 10);
 *   - a Redis call (ioredis GET and SET);
 *   - a Kafka record produced alone (idempotent, acks=-1) and fetched by one consumer group;
 *   - an HTTP request to a Fastify service (undici client, keep-alive), and the same through a Node
 *     proxy (@fastify/http-proxy, the edge's) in its own process;
 *   - a Socket.IO emit to one connected client (server and client in this process).
 * Then, with the round trips one accepted `POST /gofers` makes, and one appended event (the counts of
 * the last `bench/throughput.ts` run, docs/bench/throughput-cost.json), the CPU those round trips cost
 * alone, and their share of the idle fleet (the last `bench/idle.ts` run, docs/bench/idle-cost.json),
 * beside what the command and the event cost the fleet in that run. Usage:
 *   bash infra/node.sh node bench/floor.ts [ops=5000] [concurrency=24]
 * Writes docs/bench/floor.json and docs/bench/floor.svg.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { barChart } from './chart.ts';
import { cpuByKind, cpuSecondsOf, loadAverage, loadAtStart, warmBroker } from './cost.ts';
import { rawKafkaHop, rawSocketHop } from './raw.ts';

const OPS = Number(process.argv[2] ?? 5000);
const CONCURRENCY = Number(process.argv[3] ?? 24);
const id = randomBytes(4).toString('hex');
const PAYLOAD = { note: 'x'.repeat(440), n: 0 }; // about the size of a GoferCreated event

interface Floor {
  op: string;
  perSecond: number;
  /** CPU per operation in ms: the client (this process), the server(s), and both. */
  clientMs: number;
  serverMs: number;
  cpuMs: number;
}
const floors: Floor[] = [];

/** CPU seconds now of this process, of the named servers, and of the given children. */
function cpuNow(
  servers: readonly string[],
  children: readonly ChildProcess[],
): { client: number; server: number } {
  const byKind = cpuByKind({ env: {}, running: new Map(), self: 'self' });
  let server = servers.reduce((s, k) => s + (byKind.get(k) ?? 0), 0);
  for (const c of children) server += cpuSecondsOf(c.pid!);
  return { client: byKind.get('self') ?? 0, server };
}

/** Runs `op` OPS times, CONCURRENCY at a time, and records its CPU per operation. */
async function measure(
  name: string,
  servers: readonly string[],
  children: readonly ChildProcess[],
  op: (i: number) => Promise<unknown>,
  drained: () => Promise<unknown> = async () => undefined,
): Promise<void> {
  // Warm up (JIT, connections), then measure.
  for (let i = 0; i < 200; i++) await op(-1 - i);
  await drained();
  const c0 = cpuNow(servers, children);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < OPS; i = next++) await op(i);
    }),
  );
  await drained();
  const seconds = (performance.now() - t0) / 1000;
  const c1 = cpuNow(servers, children);
  const clientMs = ((c1.client - c0.client) * 1000) / OPS;
  const serverMs = ((c1.server - c0.server) * 1000) / OPS;
  const f = { op: name, perSecond: OPS / seconds, clientMs, serverMs, cpuMs: clientMs + serverMs };
  floors.push(f);
  console.log(
    `${name.padEnd(44)} ${f.perSecond.toFixed(0).padStart(7)}/s  cpu ${f.cpuMs.toFixed(3)} ms` +
      ` (client ${clientMs.toFixed(3)}, server ${serverMs.toFixed(3)})`,
  );
}

async function postgres(): Promise<void> {
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  const db = `oan_floor_${id}`;
  await admin.query(`create database ${db}`);
  const pool = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:5432/${db}`, max: 10 });
  // The drop below ends what the pool still holds.
  pool.on('error', () => undefined);
  try {
    await pool.query(
      'create table t (id bigserial primary key, account_id text not null, data jsonb not null)',
    );
    await measure('postgres: insert, its own commit', ['postgres'], [], (i) =>
      pool.query('insert into t (account_id, data) values ($1, $2)', [`acc-${i % 24}`, { ...PAYLOAD, n: i }]),
    );
    await measure('postgres: select by primary key', ['postgres'], [], (i) =>
      pool.query('select * from t where id = $1', [1 + Math.abs(i)]),
    );
  } finally {
    await pool.end();
    await admin.query(`drop database ${db} with (force)`);
    await admin.end();
  }
}

async function redis(): Promise<void> {
  const r = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  const prefix = `oan-floor-${id}:`;
  try {
    await measure('redis: one call (SET, GET alternately)', ['redis'], [], (i) =>
      i % 2 === 0 ? r.set(`${prefix}${i % 100}`, 'v', 'EX', 60) : r.get(`${prefix}${(i - 1) % 100}`),
    );
  } finally {
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    r.disconnect();
  }
}

async function kafka(): Promise<void> {
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  await warmBroker(brokers, `floor-${id}-`);
  const hop = await rawKafkaHop(brokers, `floor-${id}-`);
  const value = Buffer.from(JSON.stringify(PAYLOAD));
  try {
    await measure(
      'kafka: a record sent alone, fetched by one group',
      ['kafka'],
      [],
      (i) => hop.sendOne(`k${Math.abs(i) % 24}`, value),
      () => hop.caughtUp(),
    );
  } finally {
    await hop.close();
  }
}

function child(mode: string, ...args: string[]): Promise<{ proc: ChildProcess; port: number }> {
  const proc = fork(fileURLToPath(new URL('./floorServer.ts', import.meta.url)), [mode, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    proc.once('message', (m) => resolve({ proc, port: (m as { port: number }).port }));
    proc.once('exit', (code) => reject(new Error(`floorServer ${mode} exited ${code}`)));
  });
}

async function http(): Promise<void> {
  const echo = await child('echo');
  const proxy = await child('proxy', String(echo.port));
  const body = JSON.stringify({ name: 'Floor', description: 'x'.repeat(200) });
  const post = (port: number, pool: Pool) => async () => {
    const res = await pool.request({
      path: '/x',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer oan_${'k'.repeat(40)}` },
      body,
    });
    if (res.statusCode !== 201) throw new Error(`floor: ${port} answered ${res.statusCode}`);
    await res.body.text();
  };
  const direct = new Pool(`http://127.0.0.1:${echo.port}`, { connections: CONCURRENCY });
  const proxied = new Pool(`http://127.0.0.1:${proxy.port}`, { connections: CONCURRENCY });
  try {
    await measure('http: POST to a Fastify service', [], [echo.proc], post(echo.port, direct));
    await measure(
      'http: POST through a Node proxy to it',
      [],
      [echo.proc, proxy.proc],
      post(proxy.port, proxied),
    );
  } finally {
    await direct.close();
    await proxied.close();
    echo.proc.kill();
    proxy.proc.kill();
  }
}

async function socket(): Promise<void> {
  const hop = await rawSocketHop();
  const envelope = { seq: 0, type: 'gofer_message', payload: PAYLOAD, createdAt: new Date().toISOString() };
  let emitted = 0;
  try {
    await measure(
      'socket.io: an envelope emitted to one client',
      [],
      [],
      async () => {
        hop.emitOne(envelope);
        // Let the server write and the client read, as a gateway's emits interleave with its I/O.
        if (++emitted % CONCURRENCY === 0) await new Promise((r) => setImmediate(r));
      },
      () => hop.caughtUp(),
    );
  } finally {
    await hop.close();
  }
}

console.log(`load average at the start of the run: ${loadAtStart}`);
await postgres();
await redis();
await kafka();
await http();
await socket();

// The round trips of one accepted POST /gofers, and of one appended event, in the last throughput
// run, each at its floor, and their share of the idle fleet's CPU (the last bench/idle.ts run).
const costFile = new URL('../docs/bench/throughput-cost.json', import.meta.url);
interface PhaseCost {
  units: number;
  seconds: number;
  events?: { appended: number; envelopes: number };
  perUnit: Record<string, number>;
  cpuMsPerUnit: Record<string, number>;
}
const cost = JSON.parse(readFileSync(costFile, 'utf8')) as {
  loadAtStart: string;
  phases: Record<string, PhaseCost>;
};
const idleFile = new URL('../docs/bench/idle-cost.json', import.meta.url);
let idleMsPerSecond: number | undefined;
try {
  const idle = JSON.parse(readFileSync(idleFile, 'utf8')) as { phases: { idle: PhaseCost } };
  idleMsPerSecond = idle.phases.idle.perUnit.cpuMs;
} catch {
  // No idle run recorded: the idle share is left out.
}
const at = (op: string) => floors.find((f) => f.op.startsWith(op))!.cpuMs;
const proxyMs = at('http: POST through') - at('http: POST to');

/** Prices one phase's round trips per unit at their floor and prints them beside the phase's CPU. */
function priceAtFloor(title: string, phase: PhaseCost, http: { served: number; proxied: number }) {
  // A write transaction is priced as an insert with its own commit; the other statements as selects.
  // Reports written before write transactions were counted give the commits (counted lazily) instead.
  const writes = phase.perUnit.pgWriteTransactions ?? phase.perUnit.pgCommits ?? NaN;
  const parts = [
    { what: 'Postgres write transactions', count: writes, unitMs: at('postgres: insert') },
    {
      what: 'other Postgres statements',
      count: Math.max(0, (phase.perUnit.pgStatements ?? NaN) - writes),
      unitMs: at('postgres: select'),
    },
    { what: 'Redis calls', count: phase.perUnit.redisCalls ?? NaN, unitMs: at('redis') },
    {
      what: 'Kafka produce and fetch requests',
      count: (phase.perUnit.kafkaProduce ?? NaN) + (phase.perUnit.kafkaFetch ?? NaN),
      unitMs: at('kafka') / 2,
    },
    { what: 'HTTP requests served (the edge, the service)', count: http.served, unitMs: at('http: POST to') },
    { what: 'proxy hops (the edge)', count: http.proxied, unitMs: proxyMs },
    {
      what: 'Socket.IO envelopes',
      count: (phase.events?.envelopes ?? phase.units) / phase.units,
      unitMs: at('socket.io'),
    },
  ].filter((p) => p.count > 0);
  const floorMs = parts.reduce((s, p) => s + p.count * p.unitMs, 0);
  // The idle fleet's CPU over the phase's duration, shared by its units.
  const idleShareMs =
    idleMsPerSecond === undefined ? undefined : (idleMsPerSecond * phase.seconds) / phase.units;
  const measuredMs = Object.values(phase.cpuMsPerUnit).reduce((s, v) => s + v, 0);
  console.log(`\nthe round trips of ${title} (counts from ${costFile.pathname}), at their floor:`);
  for (const p of parts)
    console.log(
      `  ${p.what.padEnd(44)} ${p.count.toFixed(2).padStart(5)} × ${p.unitMs.toFixed(3)} ms = ${(p.count * p.unitMs).toFixed(3)} ms`,
    );
  if (idleShareMs !== undefined)
    console.log(
      `  ${'its share of the idle fleet'.padEnd(44)} ${idleMsPerSecond!.toFixed(1)} ms/s × ${phase.seconds.toFixed(2)} s / ${phase.units} = ${idleShareMs.toFixed(3)} ms`,
    );
  const bottom = floorMs + (idleShareMs ?? 0);
  console.log(
    `  floor ${floorMs.toFixed(2)} ms` +
      (idleShareMs === undefined ? '' : `, with the idle share ${bottom.toFixed(2)} ms,`) +
      ` of the ${measuredMs.toFixed(2)} ms it cost the fleet in that run` +
      ` (${((100 * bottom) / measuredMs).toFixed(0)} %; that run's load average at its start ${cost.loadAtStart})`,
  );
  return { parts, floorMs, idleShareMs, measuredMs };
}
const command = priceAtFloor('one accepted POST /gofers', cost.phases.command!, { served: 2, proxied: 1 });
const event = priceAtFloor('one appended event', cost.phases.event!, { served: 0, proxied: 0 });
console.log(`load average at the end: ${loadAverage()}`);
const out = new URL('../docs/bench/floor.json', import.meta.url);
writeFileSync(
  out,
  `${JSON.stringify({ loadAtStart, loadAtEnd: loadAverage(), ops: OPS, concurrency: CONCURRENCY, floors, command, event }, null, 2)}\n`,
);
console.log(`figures: ${out.pathname}`);
const chart = await barChart(
  'floor',
  floors.map((f) => ({ label: f.op, value: f.cpuMs * 1000 })),
  { title: 'CPU per round trip alone, client and server (bench/floor.ts)', unit: 'µs of CPU' },
);
console.log(`chart: ${chart}`);
process.exit(0);
