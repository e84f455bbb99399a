/**
 * The raw limit of a replay's writes (bench/replay.ts runs it after the replay, with the projector's
 * settings in its environment): reads every record of the domain and OAN topics into memory first,
 * as kafkajs hands them out (a fresh group, batch by batch), empties the read models as a replay
 * does, then times only the writes: each batch applied by the projector's own stage functions
 * (`applyDomain`, `applyOan` inside `applyBatch`), the domain batches one after another and the OAN
 * batches one partition's after another with four partitions at once beside them, as the replay's
 * two consumers do. Prints `writes alone: <records> records in <s> s → <rate> records/s`, its last
 * line the rate alone.
 */
import { openDatabase } from '@oan/db';
import { createLogger } from '@oan/http';
import { createKafka, runConsumer, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import { applyBatch, type ProjectionRecord } from '@oan/projection';
import {
  applyDomain,
  applyOan,
  emptyReadModels,
  loadProjectorConfig,
  OAN_PARTITIONS_AT_ONCE,
  toRecord,
  topicNames,
} from '@oan/projector';
import { readModelMigrations } from '@oan/readmodels';
import { waitFor } from '@oan/testing';

const cfg = loadProjectorConfig();
const logger = createLogger('replay-writes', 'warn');
const registry = new SchemaRegistry(SCHEMAS_DIR);
const t = topicNames(cfg);
const orm = await openDatabase({
  url: cfg.DATABASE_URL,
  schema: 'projector',
  migrations: readModelMigrations,
  synchronousCommit: false,
});
const kafka = createKafka({ brokers: cfg.KAFKA_BROKERS, clientId: 'bench-replay-writes', logger });
interface Batch {
  topic: string;
  partition: number;
  records: ProjectionRecord[];
}
try {
  const admin = await kafka.admin();
  let total = 0;
  for (const topic of [...t.domain, t.oan])
    for (const p of await admin.fetchTopicOffsets(topic)) total += Number(p.high);

  const batches: Batch[] = [];
  let received = 0;
  const consumer = await runConsumer({
    kafka,
    groupId: `bench-replay-writes-${Date.now().toString(36)}`,
    topics: [...t.domain, t.oan],
    fromBeginning: true,
    eachBatch: async (b) => {
      if (b.messages.length === 0) return;
      batches.push({
        topic: b.topic,
        partition: b.partition,
        records: b.messages.map((m) => toRecord(b.topic, b.partition, m)),
      });
      received += b.messages.length;
      b.resolve(b.messages[b.messages.length - 1]!.offset);
    },
  });
  await waitFor(() => received >= total, { timeoutMs: 300_000, intervalMs: 5, what: 'every record read' });
  await consumer.stop();

  await emptyReadModels(orm);
  const deps = { cfg, registry, logger };
  const domainBatch = applyDomain(deps, undefined);
  const oanBatch = applyOan(deps);
  const domain = batches.filter((b) => b.topic !== t.oan);
  const oanByPartition = new Map<number, Batch[]>();
  for (const b of batches.filter((x) => x.topic === t.oan)) {
    const own = oanByPartition.get(b.partition) ?? [];
    own.push(b);
    oanByPartition.set(b.partition, own);
  }
  const partitions = [...oanByPartition.values()];

  const t0 = performance.now();
  const domainChain = (async () => {
    for (const b of domain)
      await applyBatch(orm, 'domain', b.topic, b.partition, b.records, domainBatch(b.topic));
  })();
  // OAN_PARTITIONS_AT_ONCE partitions at a time, each partition's batches in order.
  let next = 0;
  const oanChains = Array.from({ length: Math.min(OAN_PARTITIONS_AT_ONCE, partitions.length) }, async () => {
    while (next < partitions.length) {
      const own = partitions[next++]!;
      for (const b of own) await applyBatch(orm, 'oan', b.topic, b.partition, b.records, oanBatch);
    }
  });
  await Promise.all([domainChain, ...oanChains]);
  const seconds = (performance.now() - t0) / 1000;
  const rate = Math.round(received / seconds);
  console.log(`writes alone: ${received} records in ${seconds.toFixed(2)} s → ${rate} records/s`);
  console.log(String(rate));
} finally {
  await kafka.close();
  await orm.close();
}
process.exit(0);
