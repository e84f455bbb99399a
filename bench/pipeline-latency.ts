/**
 * Append → socket latency of the whole pipeline (event store → outbox publisher → Kafka → projector → Redis →
 * gateway → socket.io client) at stepped rates, next to two raw hops measured in the same run with
 * the same client libraries: kafkajs produce → consume on the same broker, and a bare Socket.IO
 * emit → receive on loopback. Steps up the rate until the pipeline saturates (p50 over 500 ms or the
 * envelopes not all delivered within the drain timeout). Usage:
 *   bash infra/node.sh node bench/pipeline-latency.ts [rates=50,100,200,400,800] [seconds=5]
 * Each append is one transaction on its own, as a command on an existing stream commits; with
 * `APPEND=grouped` the appends go as a command on a new stream does, outside a transaction through
 * the store's group commit (`EventStore.appendCommitted`, ADR 0046), and the files are named
 * `pipeline-latency-grouped.*`.
 * The fleet first gets PIPELINE_WARM events (default 5,000) at 1,000/s, neither timed nor metered,
 * so that every rate is measured on a warm fleet (ADR 0058).
 * Prints p50/p95/p99 per rate, the pipeline/raw ratios and the fleet's CPU per appended event at each
 * rate (bench/cost.ts); writes docs/bench/pipeline-latency.svg and docs/bench/pipeline-latency-cost.json.
 */
import { randomUUID } from 'node:crypto';
import { openDatabase } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, openSocket, TestFleet, waitFor } from '@oan/testing';
import { saveChart, type Row } from './chart.ts';
import { costMeter, loadAverage } from './cost.ts';
import { benchNotice } from './fleet.ts';
import { rawKafkaHop, rawSocketHop, type Percentiles } from './raw.ts';
import { fmt, paced, percentiles } from './stats.ts';

const rates = (process.argv[2] ?? '50,100,200,400,800').split(',').map(Number);
const seconds = Number(process.argv[3] ?? 5);
// Queueing, not a stall: at saturation the median grows with the run (a p99 alone also catches GC and
// neighbours on a shared machine).
const SATURATED_P50_MS = 500;
const GROUPED = process.env.APPEND === 'grouped';
/** Events appended through the pipeline before the first rate, unmetered (PIPELINE_WARM; 0: none). */
const WARM_EVENTS = Number(process.env.PIPELINE_WARM ?? 5000);
const NAME = GROUPED ? 'pipeline-latency-grouped' : 'pipeline-latency';

async function pipelineHop(fleet: TestFleet) {
  const acc = await joinAccount(fleet.url, fleet.mailbox, `bench-${fleet.id}@example.com`);
  const socket = await openSocket(fleet.url, acc.apiKey);
  let sent = new Map<string, number>();
  let lat: number[] = [];
  socket.on('oan:event', (e: OanEventEnvelope) => {
    const t0 = sent.get(String(e.payload.installed));
    if (t0 !== undefined) lat.push(performance.now() - t0);
  });
  const store = new EventStore('auth');
  const orm = await openDatabase({ url: fleet.env.DATABASE_URL!, schema: 'auth' });
  let step = 0;
  // As a command does: one transaction (or, APPEND=grouped, a new stream's group commit), then wake
  // the outbox publisher.
  const append = async (installed: string) => {
    const appends = [
      {
        streamId: `bench-${randomUUID()}`,
        expectedVersion: 'no_stream' as const,
        events: [benchNotice(acc.userId, installed)],
      },
    ];
    if (GROUPED) await store.appendCommitted(orm, appends);
    else await orm.em.fork().transactional((em) => store.append(em, appends));
    store.committed(orm);
  };
  return {
    /**
     * The append → socket percentiles (undefined when the envelopes were not all delivered within the
     * drain timeout), and those of the append alone (its transaction committed, as a command waits
     * for it): the part of the latency that is the event store's, not the pipeline's.
     */
    async latency(
      rate: number,
      count: number,
    ): Promise<{ delivered: Percentiles | undefined; appended: Percentiles }> {
      sent = new Map();
      lat = [];
      const appendLat: number[] = [];
      const tag = `${step++}.`;
      await paced(count, rate, async (i) => {
        const t0 = performance.now();
        sent.set(tag + i, t0);
        await append(tag + i);
        appendLat.push(performance.now() - t0);
      });
      const drained = await waitFor(() => lat.length >= count, { timeoutMs: 30_000, what: 'envelopes' }).then(
        () => true,
        () => false,
      );
      return { delivered: drained ? percentiles(lat) : undefined, appended: percentiles(appendLat) };
    },
    async close() {
      socket.close();
      await orm.close();
    },
  };
}

const line = (name: string, p: Percentiles) =>
  `  ${name.padEnd(38)} p50 ${fmt(p.p50)}  p95 ${fmt(p.p95)}  p99 ${fmt(p.p99)}  max ${fmt(p.max)}`;

const fleet = await TestFleet.start({ env: { LOG_LEVEL: 'warn' } });
const kafka = await rawKafkaHop(fleet.env.KAFKA_BROKERS!.split(','), fleet.env.TOPIC_PREFIX!);
const sock = await rawSocketHop();
const pipe = await pipelineHop(fleet);
const rows: Row[] = [];
try {
  const meter = await costMeter(fleet);
  console.log(
    `${seconds} s per rate, one account (one partition per topic), one websocket client, appends ` +
      (GROUPED ? 'outside a transaction, group-committed' : 'one transaction each'),
  );
  if (WARM_EVENTS > 0) {
    // Unmetered and untimed: the fleet just started compiles its pipeline first (ADR 0058), so the
    // first rate is not measured cold and the others warm.
    const w0 = performance.now();
    await pipe.latency(1000, WARM_EVENTS);
    console.log(
      `warm-up: ${WARM_EVENTS} events at 1000/s, unmetered, ${((performance.now() - w0) / 1000).toFixed(1)} s`,
    );
  }
  for (const rate of rates) {
    const count = rate * seconds;
    const k = await kafka.latency(rate, count);
    const s = await sock.latency(rate, count);
    console.log(`rate ${rate}/s (${count} events)`);
    // Only the pipeline's phase is metered: the raw hops run in this process and on the same broker.
    const {
      result: { delivered: p, appended: a },
      cost,
    } = await meter.phase(
      `pipeline ${rate}/s`,
      () => pipe.latency(rate, count),
      () => count,
      'appended event (delivered)',
    );
    console.log(line('raw socket.io emit→receive:', s));
    console.log(line('raw kafka produce→consume (acks=-1):', k));
    console.log(line('append alone (its commit):', a));
    if (!p) {
      console.log(`  pipeline append→socket: not drained within 30 s — saturated`);
      break;
    }
    console.log(line('pipeline append→socket:', p));
    console.log(
      `  ratio pipeline/kafka p50 ${(p.p50 / k.p50).toFixed(1)}x p99 ${(p.p99 / k.p99).toFixed(1)}x; ` +
        `pipeline/socket.io p50 ${(p.p50 / s.p50).toFixed(1)}x p99 ${(p.p99 / s.p99).toFixed(1)}x`,
    );
    for (const [hop, v] of [
      ['raw socket.io', s],
      ['raw kafka', k],
      ['pipeline', p],
    ] as const) {
      rows.push({
        rate,
        hop,
        p50: v.p50,
        p99: v.p99,
        ...(hop === 'pipeline' ? { cpuMsPerEvent: cost.perUnit.cpuMs } : {}),
      });
    }
    if (p.p50 > SATURATED_P50_MS) {
      console.log(`  pipeline p50 over ${SATURATED_P50_MS} ms — saturated, stopping`);
      break;
    }
  }
  const file = await saveChart(NAME, rows, {
    title: 'p99 latency by offered rate (log scale; dashed: p50)',
    layer: [
      {
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'rate', type: 'quantitative', title: 'events/s', scale: { type: 'log' } },
          y: { field: 'p99', type: 'quantitative', title: 'ms', scale: { type: 'log' } },
          color: { field: 'hop', type: 'nominal' },
        },
      },
      {
        mark: { type: 'line', strokeDash: [4, 3] },
        encoding: {
          x: { field: 'rate', type: 'quantitative', scale: { type: 'log' } },
          y: { field: 'p50', type: 'quantitative', scale: { type: 'log' } },
          color: { field: 'hop', type: 'nominal' },
        },
      },
    ],
  });
  console.log(`chart: ${file}`);
  console.log(`costs: ${meter.save(NAME)}`);
  console.log(`load average after the run: ${loadAverage()}`);
} finally {
  await pipe.close();
  await sock.close();
  await kafka.close();
  await fleet.stop();
}
