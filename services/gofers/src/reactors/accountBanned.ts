import type { AuthEvent } from '@oan/domain';
import {
  reactorMember,
  startReactorGroup,
  type ReactorMember,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import { unpublishFromA2A } from '../commands/a2a.ts';
import type { GoferContext } from '../commands/context.ts';
import { unpublishFromRelay } from '../commands/relay.ts';
import { publishedA2AAgentsOf } from '../infra/a2aAgents.ts';
import { publishedRelayAgentsOf } from '../infra/relayAgents.ts';
import type { RelayControl } from '../relay/host.ts';

export interface AccountBannedDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: GoferContext;
  /** Absent when no relay is configured: only A2A publications are taken off. */
  relay: RelayControl | null;
  logger: LogSink;
  topicPrefix: string;
}

/**
 * Takes every published Gofer of a banned account off the relay and off A2A, as its owner's DELETEs
 * would: the A2A tasks that had not ended (one waiting for the banned owner's answer, say) end
 * `canceled`. Callers are refused from the moment of the ban already (both doors ask the credential
 * view before each turn); this makes it durable, withdraws the announcements and ends the tasks.
 * Safe to run twice: an unpublished Gofer appends nothing.
 */
export async function unpublishAllOf(
  ctx: GoferContext,
  relay: RelayControl | null,
  accountId: string,
): Promise<string[]> {
  const relayed = relay ? await publishedRelayAgentsOf(ctx.orm.em.fork(), accountId) : [];
  for (const { goferId } of relayed) {
    await unpublishFromRelay(ctx, { accountId, goferId });
    await relay?.sync(goferId);
  }
  const onA2A = await publishedA2AAgentsOf(ctx.orm.em.fork(), accountId);
  for (const goferId of onA2A) await unpublishFromA2A(ctx, { accountId, goferId });
  return [...new Set([...relayed.map((r) => r.goferId), ...onA2A])];
}

/** Group `<prefix>gofers.account-banned` on `<prefix>auth.events`. */
export function accountBannedReactor(deps: AccountBannedDeps): ReactorMember {
  return reactorMember<AuthEvent>({
    group: `${deps.topicPrefix}gofers.account-banned`,
    topic: `${deps.topicPrefix}auth.events`,
    on: {
      AccountBanned: async ({ data }) => {
        const goferIds = await unpublishAllOf(deps.ctx, deps.relay, data.accountId);
        if (goferIds.length > 0)
          deps.logger.info(
            { unpublished: goferIds.length },
            'took a banned account’s Gofers off the relay and A2A',
          );
      },
    },
  });
}

/** The reactor alone, in a group of its own. */
export const startAccountBanned = (deps: AccountBannedDeps): Promise<RunningReactor> =>
  startReactorGroup({ ...deps, members: [accountBannedReactor(deps)] });
