/**
 * Sustained end-to-end throughput over many accounts: `POST /gofers` through the edge (each accepted
 * command appends GoferCreated + the greeting, which the projector turns into one `gofer_message`
 * envelope) until every envelope arrived on the owner's socket. Accounts are spread over the topics'
 * partitions by key. Then the pipeline alone: as many events appended straight to the auth event store
 * (each becomes a `system_notice` envelope). In the same run, the raw Kafka throughput with the same
 * client (kafkajs, idempotent producer, acks=-1, batches) on a topic with as many partitions as the
 * fleet's. Usage:
 *   bash infra/node.sh node bench/throughput.ts [accounts=24] [commands=1200] [concurrency=24] [partitions=4] [appenders=32]
 * The commands run twice: first THROUGHPUT_WARM of them (default: as many as measured) on the fleet
 * just started, reported apart as `commandCold`, while its processes compile their command paths;
 * then the measured ones, the fleet's steady state (`command`).
 * Prints the load average at the start and the fleet's cost per command and per event of each phase
 * (bench/cost.ts, which warms the broker first). Writes docs/bench/throughput.svg and docs/bench/throughput-cost.json.
 */
import { randomUUID } from 'node:crypto';
import type { Socket } from 'socket.io-client';
import { openDatabase } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import { createKafka, silentLogger } from '@oan/kafka';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, openSocket, waitFor, type JoinedAccount } from '@oan/testing';
import { barChart } from './chart.ts';
import { costMeter, loadAverage } from './cost.ts';
import { benchNotice, partitionedFleet } from './fleet.ts';
import { rawKafkaHop } from './raw.ts';

const ACCOUNTS = Number(process.argv[2] ?? 24);
const COMMANDS = Number(process.argv[3] ?? 1200);
const CONCURRENCY = Number(process.argv[4] ?? 24);
const PARTITIONS = Number(process.argv[5] ?? 4);
/** Appends in flight in the pipeline-alone phase (one event per transaction, as a command makes). */
const APPENDERS = Number(process.argv[6] ?? 32);
/** POST /gofers sent first, on the fleet just started, and reported apart (THROUGHPUT_WARM; 0: none). */
const WARM_COMMANDS = Number(process.env.THROUGHPUT_WARM ?? COMMANDS);

const outdatedNotice = (accountId: string, i: number) => ({
  streamId: `bench-${randomUUID()}`,
  expectedVersion: 'no_stream' as const,
  events: [benchNotice(accountId, `0.0.${i}`)],
});

const fleet = await partitionedFleet(PARTITIONS);
const sockets: Socket[] = [];
try {
  const brokers = fleet.env.KAFKA_BROKERS!.split(',');
  const adminKafka = createKafka({ brokers, clientId: 'bench-admin', logger: silentLogger });
  const admin = await adminKafka.admin();
  const partitions = (await admin.fetchTopicOffsets(`${fleet.env.TOPIC_PREFIX!}oan.events`)).length;

  const accounts: JoinedAccount[] = [];
  for (let i = 0; i < ACCOUNTS; i += 8) {
    const batch = Array.from({ length: Math.min(8, ACCOUNTS - i) }, (_, j) =>
      joinAccount(fleet.url, fleet.mailbox, `tp-${i + j}-${fleet.id}@example.com`),
    );
    accounts.push(...(await Promise.all(batch)));
  }
  let delivered = 0;
  let notices = 0;
  let lastAt = 0;
  for (const acc of accounts) {
    const s = await openSocket(fleet.url, acc.apiKey);
    s.on('oan:event', (e: OanEventEnvelope) => {
      if (e.type === 'gofer_message') delivered++;
      else if (e.type === 'system_notice') notices++;
      lastAt = performance.now();
    });
    sockets.push(s);
  }

  let accepted = 0;
  let acceptedAt = 0;
  /** `count` POST /gofers, CONCURRENCY at a time, until every greeting reached its owner's socket. */
  const commands = async (count: number) => {
    let next = 0;
    const target = delivered + count;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let i = next++; i < count; i = next++) {
          const acc = accounts[i % accounts.length]!;
          const res = await fetch(`${fleet.url}/api/v1/gofers`, {
            method: 'POST',
            headers: { authorization: `Bearer ${acc.apiKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ locale: 'en' }),
          });
          await res.arrayBuffer();
          if (res.status !== 201) throw new Error(`POST /gofers: ${res.status}`);
          accepted++;
          acceptedAt = performance.now();
        }
      }),
    );
    await waitFor(() => delivered >= target, { timeoutMs: 300_000, what: 'gofer_message envelopes' });
  };
  const meter = await costMeter(fleet);
  if (WARM_COMMANDS > 0) {
    // First on a fleet that has just started: its processes (and the broker, if the warm-up above
    // did not reach these paths) compile their command paths meanwhile. Reported apart; the phase
    // after it is the fleet's steady state.
    await meter.phase(
      'commandCold',
      () => commands(WARM_COMMANDS),
      () => WARM_COMMANDS,
      'accepted POST /gofers (delivered), the fleet just started',
    );
  }
  accepted = 0;
  const deliveredBefore = delivered;
  let t0 = 0;
  await meter.phase(
    'command',
    async () => {
      t0 = performance.now();
      await commands(COMMANDS);
    },
    () => COMMANDS,
    'accepted POST /gofers (delivered)',
  );
  const acceptRate = (accepted * 1000) / (acceptedAt - t0);
  const e2eRate = ((delivered - deliveredBefore) * 1000) / (lastAt - t0);

  // The pipeline alone, without the command layer: the same number of events appended straight to the
  // auth event store (one new stream per append, as POST /gofers makes), APPENDERS at a time, over the
  // accounts.
  const store = new EventStore('auth');
  const orm = await openDatabase({ url: fleet.env.DATABASE_URL!, schema: 'auth' });
  let appended = 0;
  let a0 = 0;
  await meter.phase(
    'event',
    async () => {
      a0 = performance.now();
      await Promise.all(
        Array.from({ length: APPENDERS }, async () => {
          for (let i = appended++; i < COMMANDS; i = appended++) {
            const acc = accounts[i % accounts.length]!;
            // A new stream without a transaction, as handleCommand's newStream: the appends of one
            // turn of the event loop share a statement (the store's group commit), then the wake-up.
            await store.appendCommitted(orm, [outdatedNotice(acc.userId, i)]);
            store.committed(orm);
          }
        }),
      );
      await waitFor(() => notices >= COMMANDS, { timeoutMs: 300_000, what: 'system_notice envelopes' });
    },
    () => COMMANDS,
    'appended event (delivered)',
  );
  await orm.close();
  const appendRate = (COMMANDS * 1000) / (lastAt - a0);

  const raw = await rawKafkaHop(brokers, fleet.env.TOPIC_PREFIX!, partitions);
  const rawRate = await raw.throughput(50_000, 100, 600);
  await raw.close();
  await adminKafka.close();

  console.log(
    `${ACCOUNTS} accounts, ${COMMANDS} POST /gofers at concurrency ${CONCURRENCY}, ${partitions} partitions per topic` +
      ` (load average ${loadAverage()})`,
  );
  console.log(`commands accepted:                 ${acceptRate.toFixed(0)}/s`);
  console.log(`envelopes delivered end to end:    ${e2eRate.toFixed(0)}/s (first command → last envelope)`);
  console.log(
    `events appended → envelopes:       ${appendRate.toFixed(0)}/s (the pipeline without the command layer, ${APPENDERS} appends in flight)`,
  );
  console.log(
    `raw kafka produce→consume (50,000 × 600 B, batches of 100, acks=-1): ${rawRate.toFixed(0)} msgs/s`,
  );
  console.log(
    `fraction of raw kafka: commands end to end ${((100 * e2eRate) / rawRate).toFixed(2)} %, ` +
      `appends end to end ${((100 * appendRate) / rawRate).toFixed(2)} %`,
  );
  console.log(`costs: ${meter.save('throughput')}`);
  const file = await barChart(
    'throughput',
    [
      { label: 'raw kafka msgs/s (kafkajs)', value: rawRate },
      { label: 'commands accepted/s', value: acceptRate },
      { label: 'envelopes delivered/s (commands)', value: e2eRate },
      { label: 'envelopes delivered/s (appends)', value: appendRate },
    ],
    {
      title: `Sustained throughput (${ACCOUNTS} accounts, ${partitions} partitions)`,
      unit: 'per second (log)',
      log: true,
    },
  );
  console.log(`chart: ${file}`);
} finally {
  for (const s of sockets) s.close();
  await fleet.stop();
}
