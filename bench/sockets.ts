/**
 * Many idle sockets over two gateway replicas: opens ACCOUNTS × PER websocket sockets (API-key auth,
 * as the SDK does) spread round-robin over two gateway processes, reports the handshake rate and
 * the gateways' RSS per socket, then commits one envelope for every account at once and publishes
 * them as the projector does (one XADD each, pipelined), timing each socket's delivery. Writes the
 * handshake and delivery quantiles to docs/bench/sockets.json and their chart to docs/bench/sockets.svg.
 * Then, with the gateways' sockets closed, the same sockets are opened to bare Socket.IO servers, one
 * per gateway (bench/bareSocketServer.ts, each its own process; a socket in its account's room): the
 * gateway's RSS per socket is printed as a ratio to the bare server's, and the same fan-out (one
 * emit per account's room on every server) is timed at the sockets as the raw limit of the
 * delivery. Prints the gateways' (and Postgres' and Redis') CPU per socket opened and per delivery
 * (bench/cost.ts), written to docs/bench/sockets-cost.json.
 *   bash infra/node.sh node bench/sockets.ts [accounts=1000] [perAccount=10] [gateways=2]
 * One file descriptor per socket in this process (and its share in each gateway): `ulimit -n`
 * must exceed ACCOUNTS × PER plus a few hundred (the hard limit here is 20,000, not raisable).
 */
import { FLEET_NODE_FLAGS } from '@oan/config';
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { io as ioClient, type Socket } from 'socket.io-client';
import { credentialsMigration } from '@oan/auth';
import { dropDatabase, openDatabase, sql } from '@oan/db';
import { oanEventMigration } from '@oan/projection';
import { serializeEnvelope, type OanEventEnvelope } from '@oan/protocol';
import {
  freePort,
  insertAccount,
  insertApiKey,
  startProcess,
  waitReady,
  type RunningProcess,
} from '@oan/testing';
import { saveChart, type Row } from './chart.ts';
import { costMeter, loadAverage } from './cost.ts';
import { inspectArg, memoryAfterGc } from './inspector.ts';
import { fmt, percentiles } from './stats.ts';

const ACCOUNTS = Number(process.argv[2] ?? 1000);
const PER = Number(process.argv[3] ?? 10);
/** Gateway processes the sockets are spread over (1 or 2). */
const GATEWAYS = Number(process.argv[4] ?? 2);
const TOTAL = ACCOUNTS * PER;
/** Handshakes in flight at once (a reconnect storm is bounded by client backoff in practice). */
const WINDOW = 200;
const DELIVERY_TIMEOUT_MS = 30_000;

const id = randomBytes(4).toString('hex');
const url = `postgres://postgres@127.0.0.1:5432/oan_bench_${id}`;
const prefix = `bench:${id}:`;
const setup = await openDatabase({ url, schema: 'read', migrations: [oanEventMigration] });
await setup.close(true);
const orm = await openDatabase({ url, schema: 'auth', migrations: [credentialsMigration] });
const redis = new Redis('redis://127.0.0.1:6379/0');
const gateways: RunningProcess[] = [];
const sockets: Socket[] = [];

/** The 1st…100th percentiles of `samples` (ms), one row each: the chart's quantile curve. */
function quantiles(what: string, samples: number[]): Row[] {
  const s = [...samples].sort((a, b) => a - b);
  if (s.length === 0) return [];
  return Array.from({ length: 100 }, (_, k) => ({
    what,
    percent: k + 1,
    ms: Math.round(s[Math.max(0, Math.ceil(((k + 1) / 100) * s.length) - 1)]! * 10) / 10,
  }));
}

/** Waits, at most DELIVERY_TIMEOUT_MS, until every socket has a delivery time in `received`. */
async function untilDelivered(received: Float64Array): Promise<void> {
  const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
  while (received.some(Number.isNaN) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/** The delivery times of the sockets that were delivered to (NaN: not delivered). */
const deliveries = (received: Float64Array) => [...received].filter((x) => !Number.isNaN(x));

/** A delivery's spread as both fan-outs print it. */
const spread = (got: number[], p: ReturnType<typeof percentiles>) =>
  `min ${fmt(Math.min(...got))}  p50 ${fmt(p.p50)}  p95 ${fmt(p.p95)}  p99 ${fmt(p.p99)}  max ${fmt(p.max)}`;

/** Resident set of a process, from /proc (Linux). */
const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

try {
  const accounts: { id: string; key: string }[] = [];
  for (let i = 0; i < ACCOUNTS; i += 50) {
    const batch = Array.from({ length: Math.min(50, ACCOUNTS - i) }, async () => {
      const accountId = await insertAccount(orm);
      return { id: accountId, key: (await insertApiKey(orm, accountId)).key };
    });
    accounts.push(...(await Promise.all(batch)));
  }

  const inspectPorts: number[] = [];
  for (const name of (['gateway1', 'gateway2'] as const).slice(0, GATEWAYS)) {
    const port = await freePort();
    const inspectPort = await freePort();
    inspectPorts.push(inspectPort);
    const env = {
      DATABASE_URL: url,
      REDIS_PREFIX: prefix,
      JWT_SECRET: 'x'.repeat(32),
      ENABLE_OPEN_API: 'true',
      GATEWAY_ID: name === 'gateway1' ? 'g1' : 'g2',
      GATEWAY_PORT: String(port),
      LOG_LEVEL: 'warn',
    };
    gateways.push(
      startProcess(
        {
          name,
          kind: 'gateway',
          entry: 'services/gateway/src/main.ts',
          port,
          env,
          nodeArgs: [inspectArg(inspectPort)],
        },
        join(tmpdir(), `oan-bench-${id}`),
      ),
    );
  }
  await Promise.all(gateways.map((g) => waitReady(g)));
  const pids = gateways.map((g) => g.child.pid!);
  const rssBefore = pids.map(rssMiB);
  const keptBefore = await Promise.all(inspectPorts.map(memoryAfterGc));
  const meter = await costMeter({
    env: { DATABASE_URL: url },
    running: new Map(gateways.map((g) => [g.spec.name, g])),
  });

  // Socket i: account ⌊i / PER⌋, gateway i mod 2, so every account has sockets on both replicas.
  const received = new Float64Array(TOTAL).fill(NaN);
  let t0 = 0;
  let dropped = 0;
  const handshake: number[] = [];
  const open = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const start = performance.now();
      const s = ioClient(`http://127.0.0.1:${gateways[i % GATEWAYS]!.spec.port}/oan`, {
        auth: { token: accounts[Math.floor(i / PER)]!.key },
        transports: ['websocket'],
        reconnection: false,
        forceNew: true,
      });
      sockets[i] = s;
      s.once('connect', () => {
        handshake.push(performance.now() - start);
        resolve();
      });
      s.once('connect_error', reject);
      s.on('disconnect', () => dropped++);
      s.on('oan:event', () => {
        if (Number.isNaN(received[i])) received[i] = performance.now() - t0;
      });
    });
  const tOpen = performance.now();
  let next = 0;
  await meter.phase(
    'handshakes',
    () =>
      Promise.all(
        Array.from({ length: WINDOW }, async () => {
          while (next < TOTAL) await open(next++);
        }),
      ),
    () => TOTAL,
    'socket opened',
  );
  const openSecs = (performance.now() - tOpen) / 1000;
  // Let the per-socket catch-up checks and allocations settle before sampling memory.
  await new Promise((r) => setTimeout(r, 3000));
  const rssAfter = pids.map(rssMiB);
  const keptAfter = await Promise.all(inspectPorts.map(memoryAfterGc));

  console.log(
    `${TOTAL} sockets (${ACCOUNTS} accounts × ${PER}) over ${GATEWAYS} gateway(s), ${WINDOW} handshakes in flight`,
  );
  const h = percentiles(handshake);
  console.log(
    `handshakes: ${(TOTAL / openSecs).toFixed(0)}/s (${openSecs.toFixed(1)} s in all); each p50 ${fmt(h.p50)}  p95 ${fmt(h.p95)}  p99 ${fmt(h.p99)}`,
  );
  pids.forEach((_, g) => {
    const per = ((rssAfter[g]! - rssBefore[g]!) * 1024) / (TOTAL / GATEWAYS);
    console.log(
      `gateway ${g + 1}: RSS ${rssBefore[g]!.toFixed(0)} → ${rssAfter[g]!.toFixed(0)} MiB, ${per.toFixed(1)} KiB per socket`,
    );
  });

  // One envelope per account, committed in one statement, then published as the projector does.
  const texts = accounts.map(() =>
    serializeEnvelope({
      v: 1,
      seq: '1',
      eventId: randomUUID(),
      type: 'gofer_message',
      goferId: randomUUID(),
      source: 'own_gofer',
      payload: { text: 'bench' },
      createdAt: new Date().toISOString(),
    } satisfies OanEventEnvelope),
  );
  let committed = 0;
  let published = 0;
  await meter.phase(
    'delivery',
    async () => {
      t0 = performance.now();
      await sql(
        orm.em.fork(),
        `insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at)
         select a, 1, (e::jsonb->>'eventId')::uuid, 'gofer_message', e, now() from jsonb_to_recordset(?::jsonb) as t(a text, e text)`,
        [JSON.stringify(accounts.map((a, i) => ({ a: a.id, e: texts[i] })))],
      );
      committed = performance.now() - t0;
      const pipe = redis.pipeline();
      accounts.forEach((a, i) =>
        pipe.xadd(`${prefix}push`, '*', 't', 'env', 'a', a.id, 's', '1', 'e', texts[i]!),
      );
      await pipe.exec();
      published = performance.now() - t0;

      await untilDelivered(received);
    },
    () => deliveries(received).length,
    'envelope delivered to a socket',
  );
  const got = deliveries(received);
  const d = percentiles(got);
  console.log(
    `delivery of ${ACCOUNTS} envelopes to ${TOTAL} sockets (from before the commit; commit ${fmt(committed)}, all published at ${fmt(published)}):`,
  );
  console.log(
    `  delivered ${got.length}/${TOTAL} (${((100 * got.length) / TOTAL).toFixed(2)}%) within ${DELIVERY_TIMEOUT_MS / 1000} s;` +
      ` ${spread(got, d)}`,
  );
  console.log(`  sockets dropped during the run: ${dropped}`);
  const file = await saveChart(
    'sockets',
    [...quantiles('handshake', handshake), ...quantiles('delivery', got)],
    {
      title: `${TOTAL} sockets (${ACCOUNTS} accounts × ${PER}) over ${GATEWAYS} gateway(s): latency by share of sockets`,
      mark: { type: 'line' },
      encoding: {
        x: { field: 'percent', type: 'quantitative', title: '% of sockets at or below' },
        y: { field: 'ms', type: 'quantitative', title: 'ms' },
        color: { field: 'what', type: 'nominal', title: null },
      },
    },
  );
  console.log(`chart: ${file}`);
  console.log(`costs: ${meter.save('sockets')}`);

  // The same sockets on bare Socket.IO servers, one per gateway (socket i on server i mod GATEWAYS, in
  // its account's room), for the memory per socket and the same fan-out without the gateway's work.
  sockets.forEach((s) => s.close());
  sockets.length = 0;
  const perGateway = TOTAL / GATEWAYS;
  const bares = await Promise.all(
    gateways.map(async () => {
      const port = await freePort();
      const inspectPort = await freePort();
      const child = spawn(
        process.execPath,
        [...FLEET_NODE_FLAGS, inspectArg(inspectPort), 'bench/bareSocketServer.ts'],
        {
          env: { ...process.env, PORT: String(port) },
          stdio: ['pipe', 'pipe', 'inherit'],
        },
      );
      const lines = createInterface({ input: child.stdout });
      await new Promise<void>((resolve) => lines.once('line', () => resolve()));
      const rssBefore = rssMiB(child.pid!);
      return { port, inspectPort, child, lines, rssBefore, keptBefore: await memoryAfterGc(inspectPort) };
    }),
  );
  try {
    const bareReceived = new Float64Array(TOTAL).fill(NaN);
    let bareT0 = 0;
    let n = 0;
    await Promise.all(
      Array.from({ length: WINDOW }, async () => {
        while (n < TOTAL) {
          const i = n++;
          const s = ioClient(`http://127.0.0.1:${bares[i % GATEWAYS]!.port}/oan`, {
            auth: { room: String(Math.floor(i / PER)) },
            transports: ['websocket'],
            reconnection: false,
            forceNew: true,
          });
          sockets.push(s);
          s.on('oan:event', () => {
            if (Number.isNaN(bareReceived[i])) bareReceived[i] = performance.now() - bareT0;
          });
          await new Promise<void>((resolve, reject) => {
            s.once('connect', () => resolve());
            s.once('connect_error', reject);
          });
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 3000));
    const barePer = bares.map((b) => ((rssMiB(b.child.pid!) - b.rssBefore) * 1024) / perGateway);
    const gatewayPer = pids.map((_, g) => ((rssAfter[g]! - rssBefore[g]!) * 1024) / perGateway);
    console.log(
      `bare Socket.IO servers: ${barePer.map((b) => b.toFixed(1)).join(' / ')} KiB per socket over ${perGateway} sockets each; ` +
        `gateway / bare: ${gatewayPer.map((g, k) => (g / barePer[k]!).toFixed(2)).join(' / ')}`,
    );
    // The same after a full collection in each process: what it keeps per socket, without the garbage
    // of the handshakes that a collection had not yet taken back when RSS was read above.
    const bareKept = await Promise.all(bares.map((b) => memoryAfterGc(b.inspectPort)));
    const kept = (field: 'heapUsed' | 'rss', before: NodeJS.MemoryUsage, after: NodeJS.MemoryUsage) =>
      (after[field] - before[field]) / 1024 / perGateway;
    const gatewayHeap = keptAfter.map((a, g) => kept('heapUsed', keptBefore[g]!, a));
    const bareHeap = bareKept.map((a, k) => kept('heapUsed', bares[k]!.keptBefore, a));
    const gatewayRss = keptAfter.map((a, g) => kept('rss', keptBefore[g]!, a));
    const bareRss = bareKept.map((a, k) => kept('rss', bares[k]!.keptBefore, a));
    const list = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
    const ratios = (xs: number[], ys: number[]) => xs.map((x, k) => (x / ys[k]!).toFixed(2)).join(' / ');
    console.log(
      `after a full collection (inspector): JS heap kept per socket, gateways ${list(gatewayHeap)} KiB, bare ${list(bareHeap)} KiB, ` +
        `gateway / bare ${ratios(gatewayHeap, bareHeap)}; RSS per socket, gateways ${list(gatewayRss)} KiB, bare ${list(bareRss)} KiB, ` +
        `gateway / bare ${ratios(gatewayRss, bareRss)}`,
    );
    // The raw limit of the fan-out: the same sockets, one emit per account's room on every server.
    bareT0 = performance.now();
    const emitted = bares.map((b) => new Promise<void>((resolve) => b.lines.once('line', () => resolve())));
    for (const b of bares) b.child.stdin.write(`emit ${ACCOUNTS}\n`);
    await Promise.all(emitted);
    await untilDelivered(bareReceived);
    const bareGot = deliveries(bareReceived);
    const b = percentiles(bareGot);
    console.log(
      `bare fan-out, ${ACCOUNTS} room emits to the same ${TOTAL} sockets over ${GATEWAYS} bare server(s): delivered ${bareGot.length}/${TOTAL};` +
        ` ${spread(bareGot, b)};` +
        ` gateway / bare p50 ${(d.p50 / b.p50).toFixed(1)}x p99 ${(d.p99 / b.p99).toFixed(1)}x`,
    );
    console.log(`load average after the run: ${loadAverage()}`);
  } finally {
    for (const b of bares) b.child.kill('SIGTERM');
  }
} finally {
  sockets.forEach((s) => s.close());
  for (const g of gateways) {
    g.child.kill('SIGTERM');
    await g.exited;
  }
  await redis.del(`${prefix}push`);
  redis.disconnect();
  await orm.close(true);
  await dropDatabase(url);
}
