import type { AuthEvent } from '@oan/domain';
import {
  reactor,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import type { GoferContext } from '../commands/context.ts';
import { unpublishFromRelay } from '../commands/relay.ts';
import { publishedRelayAgentsOf } from '../infra/relayAgents.ts';
import type { RelayControl } from '../relay/host.ts';

export interface AccountBannedDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: GoferContext;
  relay: RelayControl;
  logger: LogSink;
  topicPrefix: string;
}

/**
 * Takes every published Gofer of a banned account off the relay, as its owner's DELETE would.
 * Callers are refused from the moment of the ban already (the relay host asks the credential view
 * before each turn); this makes it durable and withdraws the announcements. Safe to run twice: an
 * unpublished Gofer appends nothing.
 */
export async function unpublishAllOf(
  ctx: GoferContext,
  relay: RelayControl,
  accountId: string,
): Promise<string[]> {
  const rows = await publishedRelayAgentsOf(ctx.orm.em.fork(), accountId);
  for (const { goferId } of rows) {
    await unpublishFromRelay(ctx, { accountId, goferId });
    await relay.sync(goferId);
  }
  return rows.map((r) => r.goferId);
}

/** Group `<prefix>gofers.account-banned` on `<prefix>auth.events`. */
export async function startAccountBanned(deps: AccountBannedDeps): Promise<RunningReactor> {
  return reactor<AuthEvent>({
    kafka: deps.kafka,
    registry: deps.registry,
    logger: deps.logger,
    group: `${deps.topicPrefix}gofers.account-banned`,
    topic: `${deps.topicPrefix}auth.events`,
    on: {
      AccountBanned: async ({ data }) => {
        const goferIds = await unpublishAllOf(deps.ctx, deps.relay, data.accountId);
        if (goferIds.length > 0)
          deps.logger.info({ unpublished: goferIds.length }, 'took a banned account’s Gofers off the relay');
      },
    },
  });
}
