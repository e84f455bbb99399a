import {
  fromKafkaMessage,
  HEADER_TYPE,
  runConsumer,
  type KafkaHandle,
  type Logger,
  type RunningConsumer,
  type SchemaRegistry,
} from '@oan/log';
import { plausibleGoferId, runGoferCommand, type GoferContext } from '../commands/context';
import { announcePairing } from '../domain/pairing';

export interface PairingsDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: GoferContext;
  logger: Logger;
  topicPrefix: string;
}

export interface RunningPairings {
  readonly groupId: string;
  readonly consumer: RunningConsumer;
  stop(): Promise<void>;
}

/** The public snapshot of one side in the matching context's `ThreadProposed`. */
interface ProposedSide {
  goferId: string;
  name: string;
}

const sideOf = (v: unknown): ProposedSide | null => {
  if (v === null || typeof v !== 'object') return null;
  const { goferId, name } = v as Record<string, unknown>;
  return typeof goferId === 'string' && typeof name === 'string' ? { goferId, name } : null;
};

/** Appends the pairing row to one side's role-chat; idempotent (a deterministic messageId). */
export async function announceToSide(
  ctx: GoferContext,
  threadId: string,
  self: ProposedSide,
  counterpart: ProposedSide,
): Promise<boolean> {
  if (!plausibleGoferId(self.goferId)) return false;
  const { appended } = await runGoferCommand(ctx, self.goferId, (state, now) => {
    if (state.status !== 'active') return null;
    const events = announcePairing(
      state,
      {
        threadId,
        self: { roleId: self.goferId, name: self.name },
        counterpart: { roleId: counterpart.goferId, name: counterpart.name },
      },
      now,
    );
    return { accountId: state.accountId, events };
  });
  return appended.length > 0;
}

/**
 * Pairing announcements (group `<prefix>gofers.pairings` on `<prefix>matching.events`): each
 * `ThreadProposed` becomes a `system` row with `kind: 'pairing'` in both Gofers' role-chats. An
 * offset is committed after both appends, so a crash redelivers and the ids make it a no-op.
 */
export async function startPairings(deps: PairingsDeps): Promise<RunningPairings> {
  const { kafka, registry, logger, ctx } = deps;
  const topic = `${deps.topicPrefix}matching.events`;
  const groupId = `${deps.topicPrefix}gofers.pairings`;
  await kafka.ensureTopics([{ topic }]);
  const consumer = await runConsumer({
    kafka,
    groupId,
    topics: [topic],
    fromBeginning: true,
    eachBatch: async (batch) => {
      for (const m of batch.messages) {
        if (!batch.isRunning() || batch.isStale()) return;
        const type = m.headers[HEADER_TYPE];
        if (type === undefined || type === 'ThreadProposed') {
          let data: Record<string, unknown> | null = null;
          try {
            const record = fromKafkaMessage(registry, m);
            if (record.type === 'ThreadProposed') data = record.data;
          } catch (err) {
            logger.warn(
              { groupId, offset: m.offset, type: err instanceof Error ? err.name : typeof err },
              'pairings skipped an undecodable record',
            );
          }
          const [a, b] = [sideOf(data?.a), sideOf(data?.b)];
          if (data && a && b && typeof data.threadId === 'string') {
            await announceToSide(ctx, data.threadId, a, b);
            await announceToSide(ctx, data.threadId, b, a);
          }
        }
        await batch.commit(m.offset);
      }
    },
  });
  logger.info({ groupId, topic }, 'pairings reactor started');
  return { groupId, consumer, stop: () => consumer.stop() };
}
