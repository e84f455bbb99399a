import { runConsumer, type RunningConsumer } from './consumer';
import type { KafkaHandle } from './kafka';
import type { Logger } from './logger';
import { fromKafkaMessage, type LogRecord } from './message';
import { HEADER_TYPE, type SchemaRegistry } from './schema-registry';

export interface ReactorLoop {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  logger: Logger;
  groupId: string;
  topic: string;
  /** The record types this reactor acts on; every other record is committed past at once. */
  types: ReadonlySet<string>;
  handle(record: LogRecord): Promise<void>;
}

export interface RunningReactor {
  readonly groupId: string;
  readonly consumer: RunningConsumer;
  stop(): Promise<void>;
}

/**
 * A reactor's loop (the matching and conversations reactors; the gofers brain has its own): one
 * partition's records in order, each handled before its offset is committed, so a crash redelivers
 * and the idempotent commands (deterministic ids, stream versions) turn the redelivery into
 * nothing. A failed handler throws: kafkajs restarts the batch from the last committed offset.
 */
export async function startReactorLoop(loop: ReactorLoop): Promise<RunningReactor> {
  const { kafka, registry, logger, groupId, topic } = loop;
  await kafka.ensureTopics([{ topic }]);
  const consumer = await runConsumer({
    kafka,
    groupId,
    topics: [topic],
    fromBeginning: true,
    eachBatch: async (batch) => {
      const beat = setInterval(() => void batch.heartbeat().catch(() => undefined), 3000);
      try {
        for (const m of batch.messages) {
          if (!batch.isRunning() || batch.isStale()) return;
          const type = m.headers[HEADER_TYPE];
          if (type === undefined || loop.types.has(type)) {
            let record: LogRecord | null = null;
            try {
              record = fromKafkaMessage(registry, m);
            } catch (err) {
              logger.warn(
                { groupId, offset: m.offset, type: err instanceof Error ? err.name : typeof err },
                'reactor skipped an undecodable record',
              );
            }
            if (record && loop.types.has(record.type)) await loop.handle(record);
          }
          await batch.commit(m.offset);
        }
      } finally {
        clearInterval(beat);
      }
    },
  });
  logger.info({ groupId, topic }, 'reactor started');
  return { groupId, consumer, stop: () => consumer.stop() };
}
