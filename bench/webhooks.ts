/**
 * Webhooks beside sockets (ADR 0018): ACCOUNTS accounts, each with one socket and one
 * webhook to a receiver on loopback (a node:http server in this process that answers 204); EVENTS
 * auth events appended straight to the auth event store, APPENDERS at a time (each one
 * `system_notice` envelope). Both paths are fed by the same envelopes in the same run: prints
 * envelopes/s delivered to the sockets and to the webhooks (first append → last delivery), and the
 * webhook delivery lag quantiles (envelope createdAt → receipt). Usage:
 *   bash infra/node.sh node bench/webhooks.ts [accounts=24] [events=1200] [partitions=4] [appenders=32]
 * Prints the fleet's CPU per appended event (bench/cost.ts). Writes docs/bench/webhooks.json,
 * docs/bench/webhooks.svg and docs/bench/webhooks-cost.json.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'socket.io-client';
import { openDatabase } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, openSocket, waitFor, type JoinedAccount } from '@oan/testing';
import { barChart } from './chart.ts';
import { costMeter, loadAverage } from './cost.ts';
import { benchNotice, partitionedFleet } from './fleet.ts';
import { fmt, percentiles } from './stats.ts';

const ACCOUNTS = Number(process.argv[2] ?? 24);
const EVENTS = Number(process.argv[3] ?? 1200);
const PARTITIONS = Number(process.argv[4] ?? 4);
const APPENDERS = Number(process.argv[5] ?? 32);

let hooked = 0;
let hookedAt = 0;
const lags: number[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const e = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OanEventEnvelope;
    if (e.type === 'system_notice') {
      hooked++;
      hookedAt = performance.now();
      lags.push(Date.now() - Date.parse(e.createdAt));
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const fleet = await partitionedFleet(PARTITIONS, { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_MS: '1000' });
const sockets: Socket[] = [];
try {
  const accounts: JoinedAccount[] = [];
  for (let i = 0; i < ACCOUNTS; i += 8) {
    const batch = Array.from({ length: Math.min(8, ACCOUNTS - i) }, (_, j) =>
      joinAccount(fleet.url, fleet.mailbox, `wh-${i + j}-${fleet.id}@example.com`),
    );
    accounts.push(...(await Promise.all(batch)));
  }
  let pushed = 0;
  let pushedAt = 0;
  for (const acc of accounts) {
    const res = await fetch(`${fleet.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acc.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: hookUrl }),
    });
    if (res.status !== 201) throw new Error(`POST /webhooks: ${res.status} ${await res.text()}`);
    const s = await openSocket(fleet.url, acc.apiKey);
    s.on('oan:event', (e: OanEventEnvelope) => {
      if (e.type !== 'system_notice') return;
      pushed++;
      pushedAt = performance.now();
    });
    sockets.push(s);
  }

  const store = new EventStore('auth');
  const orm = await openDatabase({ url: fleet.env.DATABASE_URL!, schema: 'auth' });
  let appended = 0;
  let t0 = 0;
  const meter = await costMeter(fleet);
  await meter.phase(
    'delivery',
    async () => {
      t0 = performance.now();
      await Promise.all(
        Array.from({ length: APPENDERS }, async () => {
          for (let i = appended++; i < EVENTS; i = appended++) {
            const acc = accounts[i % accounts.length]!;
            await store.append(orm.em.fork(), [
              {
                streamId: `bench-${randomUUID()}`,
                expectedVersion: 'no_stream' as const,
                events: [benchNotice(acc.userId, `0.0.${i}`)],
              },
            ]);
            store.committed(orm);
          }
        }),
      );
      await waitFor(() => pushed >= EVENTS, { timeoutMs: 300_000, what: 'envelopes on the sockets' });
      await waitFor(() => hooked >= EVENTS, { timeoutMs: 300_000, what: 'envelopes at the webhooks' });
    },
    () => EVENTS,
    'appended event (delivered to its socket and its webhook)',
  );
  await orm.close();
  const socketRate = (EVENTS * 1000) / (pushedAt - t0);
  const hookRate = (EVENTS * 1000) / (hookedAt - t0);
  const lag = percentiles(lags);
  console.log(
    `${ACCOUNTS} accounts (one socket and one webhook each), ${EVENTS} events appended by ${APPENDERS}, ` +
      `${PARTITIONS} partitions (load average ${loadAverage()})`,
  );
  console.log(
    `envelopes delivered to the sockets:  ${socketRate.toFixed(0)}/s (first append → last envelope)`,
  );
  console.log(`envelopes delivered to the webhooks: ${hookRate.toFixed(0)}/s (first append → last 2xx)`);
  console.log(
    `webhook lag (envelope createdAt → receipt): p50 ${fmt(lag.p50)} / p95 ${fmt(lag.p95)} / p99 ${fmt(lag.p99)} / max ${fmt(lag.max)}`,
  );
  const file = await barChart(
    'webhooks',
    [
      { label: 'envelopes delivered/s (sockets)', value: socketRate },
      { label: 'envelopes delivered/s (webhooks)', value: hookRate },
    ],
    { title: `Webhooks beside sockets (${ACCOUNTS} accounts, ${EVENTS} envelopes)`, unit: 'per second' },
  );
  console.log(`chart: ${file}`);
  console.log(`costs: ${meter.save('webhooks')}`);
  if (hooked !== EVENTS) console.log(`(the receiver got ${hooked} deliveries for ${EVENTS} envelopes)`);
} finally {
  for (const s of sockets) s.close();
  await fleet.stop();
  await new Promise((done) => receiver.close(done));
}
