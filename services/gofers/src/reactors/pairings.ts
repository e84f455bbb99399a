import { goferStreamId, type ThreadEvent, type ThreadProposed } from '@oan/domain';
import {
  reactorMember,
  startReactorGroup,
  type ReactorMember,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import { goferCommands, plausibleGoferId, type GoferContext } from '../commands/context.ts';

export interface PairingsDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: GoferContext;
  logger: LogSink;
  topicPrefix: string;
}

export type RunningPairings = RunningReactor;

/** The public snapshot of one side in the matching context's `ThreadProposed`. */
type ProposedSide = Pick<ThreadProposed['a'], 'goferId' | 'name'>;

/** Appends the pairing row to one side's role-chat; idempotent (a deterministic messageId). */
export async function announceToSide(
  ctx: GoferContext,
  threadId: string,
  self: ProposedSide,
  counterpart: ProposedSide,
): Promise<boolean> {
  if (!plausibleGoferId(self.goferId)) return false;
  const { appended } = await goferCommands(ctx)(goferStreamId(self.goferId), {
    type: 'AnnouncePairing',
    data: {
      threadId,
      self: { roleId: self.goferId, name: self.name },
      counterpart: { roleId: counterpart.goferId, name: counterpart.name },
    },
  });
  return appended.length > 0;
}

/**
 * Pairing announcements (group `<prefix>gofers.pairings` on `<prefix>matching.events`): each
 * `ThreadProposed` becomes a `system` row with `kind: 'pairing'` in both Gofers' role-chats. An
 * offset is committed after both appends, so a crash redelivers and the ids make it a no-op.
 */
export function pairingsReactor(deps: PairingsDeps): ReactorMember {
  const { ctx } = deps;
  return reactorMember<ThreadEvent>({
    group: `${deps.topicPrefix}gofers.pairings`,
    topic: `${deps.topicPrefix}matching.events`,
    on: {
      ThreadProposed: async ({ data: { threadId, a, b } }) => {
        await announceToSide(ctx, threadId, a, b);
        await announceToSide(ctx, threadId, b, a);
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startPairings = (deps: PairingsDeps): Promise<RunningReactor> =>
  startReactorGroup({ ...deps, members: [pairingsReactor(deps)] });
