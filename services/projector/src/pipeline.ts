import type { MikroORM } from '@oan/db';
import {
  runConsumer,
  type KafkaHandle,
  type Sender,
  type RunningConsumer,
  type SchemaRegistry,
} from '@oan/kafka';
import { applyBatch, type ApplyFn, type OneStatementFn, type ProjectionRecord } from '@oan/projection';
import type { Logger } from '@oan/http';
import type { BatchContext, ConsumedMessage } from '@oan/kafka';
import type { Redis } from 'ioredis';
import { topicNames, type ProjectorConfig } from './config.ts';
import { applyDomain, applyOan, applyOanAlone } from './stages/batches.ts';
import type { CommittedEnvelope } from './stages/oan.ts';
import { metrics, recordLag } from './metrics.ts';

/**
 * A member killed with -9 keeps its partitions until the broker's session timeout expires: short, so
 * a restarted projector resumes within seconds (kafkajs default: 30 s).
 */
const SESSION_TIMEOUT_MS = 8000;

/**
 * Batches of different `oan.events` partitions the OAN stage writes at once. A partition holds whole
 * accounts (key = recipient), so two partitions' transactions never touch the same seq rows, as with
 * two replicas; one partition's batches stay in order. While one batch waits on Postgres another is
 * written (a replay was 8 % faster; docs/benchmarks.md). The domain stage keeps one at a time: its
 * read models are not all split by account.
 */
export const OAN_PARTITIONS_AT_ONCE = 4;

export interface PipelineDeps {
  cfg: ProjectorConfig;
  orm: MikroORM;
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  redis: Redis;
  logger: Logger;
  /** Replay rebuilds read models without re-producing notifications (they are on the log already). */
  mode: 'live' | 'replay';
  onApplied?: (topic: string, partition: number, nextOffset: bigint) => void;
}

export interface Pipeline {
  consumers: RunningConsumer[];
  stop(): Promise<void>;
}

export const toRecord = (topic: string, partition: number, m: ConsumedMessage): ProjectionRecord => ({
  topic,
  partition,
  offset: m.offset,
  key: m.key,
  headers: m.headers,
  value: m.value,
  timestamp: m.timestamp,
});

export async function startPipeline(d: PipelineDeps): Promise<Pipeline> {
  const t = topicNames(d.cfg);
  const producer: Sender | undefined = d.mode === 'live' ? await d.kafka.sender() : undefined;
  const domainBatch = applyDomain(d, producer);
  const oanBatch = applyOan(d);
  // Live, the common batch of stage 2 goes as one statement (ADR 0059); not while a QA hold keeps the
  // batch's transaction open on purpose (the fault tests kill the projector inside it).
  const holdsInTransaction = d.cfg.PROJECTOR_QA_HOLD_MS > 0 && d.cfg.PROJECTOR_QA_HOLD_AT === 'commit';
  const oanAlone = d.mode === 'live' && !holdsInTransaction ? applyOanAlone(d) : undefined;

  const domain = await runConsumer({
    kafka: d.kafka,
    groupId: t.domainGroup,
    topics: t.domain,
    fromBeginning: true,
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    eachBatch: async (b) => {
      if (b.messages.length === 0) return;
      const records = b.messages.map((m) => toRecord(b.topic, b.partition, m));
      const applied = await applyOrRewind(d, b, 'domain', records, domainBatch(b.topic));
      if (!applied) return;
      const { nextOffset } = applied;
      b.resolve(b.messages[b.messages.length - 1]!.offset);
      await b.commit(b.messages[b.messages.length - 1]!.offset).catch(() => undefined);
      recordLag('domain', b, b.messages[b.messages.length - 1]!.offset);
      d.onApplied?.(b.topic, b.partition, nextOffset);
    },
  });

  const oan = await runConsumer({
    kafka: d.kafka,
    groupId: t.oanGroup,
    topics: [t.oan],
    fromBeginning: true,
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    partitionsConsumedConcurrently: OAN_PARTITIONS_AT_ONCE,
    eachBatch: async (b) => {
      if (b.messages.length === 0) return;
      const records = b.messages.map((m) => toRecord(b.topic, b.partition, m));
      const applied = await applyOrRewind(d, b, 'oan', records, oanBatch, oanAlone);
      if (!applied) return;
      const { result, nextOffset } = applied;
      // After the commit: visible in the table before any socket sees it, so a client never sees a
      // seq its REST backfill cannot.
      if (result && result.length > 0 && d.mode === 'live') await publish(d, result);
      metrics.envelopes.inc(result?.length ?? 0);
      await b.commit(b.messages[b.messages.length - 1]!.offset).catch(() => undefined);
      recordLag('oan', b, b.messages[b.messages.length - 1]!.offset);
      d.onApplied?.(b.topic, b.partition, nextOffset);
    },
  });

  return {
    consumers: [domain, oan],
    async stop() {
      await Promise.all([domain.stop(), oan.stop()]);
    },
  };
}

/** Per (stage, topic, partition): the stored offset this process last fetched again from. */
const rewoundTo = new Map<string, bigint>();

/**
 * applyBatch, or — when the table is behind the batch (its stored offset is below the batch's first
 * record: a server crash lost the tail of unflushed projector commits, ADR 0015) — fetch the partition
 * again from the stored offset and apply nothing now (null). Should the refetch start past it again,
 * the records are not there to have: the batch is applied as it is.
 */
async function applyOrRewind<R>(
  d: PipelineDeps,
  b: BatchContext,
  stage: 'domain' | 'oan',
  records: ProjectionRecord[],
  apply: ApplyFn<R>,
  oneStatement?: OneStatementFn<R>,
): Promise<{ result: R | undefined; nextOffset: bigint } | null> {
  const key = `${stage}\u0000${b.topic}\u0000${b.partition}`;
  if (d.cfg.PROJECTOR_QA_HOLD_AT === 'apply') await qaHold(d, b, stage);
  const held: ApplyFn<R> =
    d.cfg.PROJECTOR_QA_HOLD_AT === 'commit'
      ? async (em, fresh) => {
          const result = await apply(em, fresh);
          await qaHold(d, b, stage);
          return result;
        }
      : apply;
  let out = await applyBatch(d.orm, stage, b.topic, b.partition, records, held, {
    ...(oneStatement ? { oneStatement } : {}),
  });
  if (out.refused > 0) refused(d, b, stage, out.refused);
  if (out.gapFrom !== undefined) {
    const where = {
      stage,
      topic: b.topic,
      partition: b.partition,
      stored: String(out.gapFrom),
      first: records[0]?.offset,
    };
    if (rewoundTo.get(key) !== out.gapFrom) {
      rewoundTo.set(key, out.gapFrom);
      d.logger.warn(where, 'projection behind the batch: fetching again from its stored offset');
      b.seek(out.gapFrom.toString());
      return null;
    }
    d.logger.error(
      where,
      'records between the stored offset and the batch are gone from the log: applying the batch',
    );
    out = await applyBatch(d.orm, stage, b.topic, b.partition, records, held, { acceptGap: true });
    if (out.refused > 0) refused(d, b, stage, out.refused);
  }
  rewoundTo.delete(key);
  return out;
}

/**
 * A member that lost the partition in a rebalance, or runs beside its new owner for a moment: its
 * batch rolled back and was read again from the stored offset, so nothing was applied twice.
 */
function refused(d: PipelineDeps, b: BatchContext, stage: 'domain' | 'oan', times: number): void {
  metrics.refusedBatches.inc({ stage }, times);
  d.logger.warn(
    { stage, topic: b.topic, partition: b.partition, first: b.messages[0]?.offset },
    'batch commit refused: another member moved the partition offset',
  );
}

/** PROJECTOR_QA_HOLD_MS (QA only, refused in production): a window to stop or kill a busy member in. */
async function qaHold(d: PipelineDeps, b: BatchContext, stage: 'domain' | 'oan'): Promise<void> {
  if (d.cfg.PROJECTOR_QA_HOLD_MS === 0) return;
  d.logger.info(
    {
      stage,
      topic: b.topic,
      partition: b.partition,
      first: b.messages[0]?.offset,
      last: b.messages.at(-1)?.offset,
      at: d.cfg.PROJECTOR_QA_HOLD_AT,
    },
    'qa: holding the batch',
  );
  await new Promise((r) => setTimeout(r, d.cfg.PROJECTOR_QA_HOLD_MS));
}

/** Best effort: a lost publish is recovered by the gateways' gap fill from the table. */
async function publish(d: PipelineDeps, envelopes: CommittedEnvelope[]): Promise<void> {
  const key = `${d.cfg.REDIS_PREFIX}push`;
  const pipe = d.redis.pipeline();
  for (const e of envelopes) {
    pipe.xadd(
      key,
      'MAXLEN',
      '~',
      '100000',
      '*',
      't',
      'env',
      'a',
      e.accountId,
      's',
      e.seq.toString(),
      'e',
      e.envelope,
    );
  }
  try {
    await pipe.exec();
  } catch (err) {
    d.logger.warn({ err: (err as Error).message }, 'push publish failed; gateways will fill the gap');
  }
}
