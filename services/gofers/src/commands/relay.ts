import { ForbiddenError } from '../domain/errors.ts';
import { goferStreamId } from '@oan/domain';
import { ensureRelayKey, relayAgentOf, setRelayPublished } from '../infra/relayAgents.ts';
import { relayTurnSnapshot } from '../infra/relayView.ts';
import type { KeySealer } from '../relay/keys.ts';
import { assertOwnsActiveGofer, goferCommands, plausibleGoferId, type GoferContext } from './context.ts';

export interface RelayInput {
  accountId: string;
  goferId: string;
}

/**
 * ADR 0023: the owner publishes the Gofer as a ConnectOnion relay agent. Its key is made
 * on the first publication (sealed in `gofers.relay_agents`), and `GoferRelayPublished` names only
 * the address. Idempotent: publishing a published Gofer appends nothing and answers the same address.
 */
export async function publishOnRelay(
  ctx: GoferContext,
  sealer: KeySealer,
  input: RelayInput,
): Promise<{ address: string }> {
  // Unknown, deleted and foreign Gofers get the one probe-safe 403, before any key is made for them.
  await assertOwnsActiveGofer(ctx, input.accountId, input.goferId);
  const { goferId, accountId } = input;
  const row = await ensureRelayKey(ctx.orm.em.fork(), sealer, {
    goferId,
    accountId,
    now: ctx.now().toISOString(),
  });
  await goferCommands(ctx)(
    goferStreamId(goferId),
    { type: 'PublishOnRelay', data: { accountId, address: row.address } },
    {
      inline: async (em, _appended, state) => {
        if (state.status === 'active' && state.relayAddress !== null)
          await setRelayPublished(em, goferId, true, ctx.now().toISOString());
      },
    },
  );
  return { address: row.address };
}

/**
 * Takes the Gofer off the relay (idempotent). Answers the address it had, so the caller can wait for
 * the relay's directory to drop it, or null when it was never published.
 */
export async function unpublishFromRelay(
  ctx: GoferContext,
  input: RelayInput,
): Promise<{ address: string | null }> {
  if (!plausibleGoferId(input.goferId)) throw new ForbiddenError('GOFER_FORBIDDEN', 'Forbidden');
  const { goferId, accountId } = input;
  await goferCommands(ctx)(
    goferStreamId(goferId),
    { type: 'UnpublishFromRelay', data: { accountId } },
    { inline: (em) => setRelayPublished(em, goferId, false, ctx.now().toISOString()) },
  );
  const row = await relayAgentOf(ctx.orm.em.fork(), goferId);
  return { address: row?.address ?? null };
}

export interface RelayTurn {
  goferId: string;
  /** The caller's verified relay address. */
  caller: string;
  asked: string;
  answered: string;
}

/**
 * One answered turn of a relay caller, as an assistant row of kind 'relay' in the Gofer's role-chat
 * (the owner's connector gets it as a `gofer_message` that names the caller). Appends nothing when
 * the Gofer was unpublished or deleted meanwhile: the caller then gets no answer.
 */
export async function recordRelayTurn(ctx: GoferContext, turn: RelayTurn): Promise<{ appended: boolean }> {
  const messageId = ctx.ids();
  // The bounded view, not the whole stream: a busy Gofer's role-chat is long (src/infra/relayView.ts).
  const { appended } = await goferCommands(ctx)(
    goferStreamId(turn.goferId),
    {
      type: 'AddRelayTurn',
      data: { messageId, caller: turn.caller, asked: turn.asked, answered: turn.answered },
    },
    { snapshot: relayTurnSnapshot(ctx.store.schema, turn.goferId) },
  );
  return { appended: appended.length > 0 };
}
