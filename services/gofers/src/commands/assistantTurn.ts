import type { DiscoveryStatus } from '@oan/domain';
import { goferStreamId } from '@oan/domain';
import type { GoferProfile } from '../domain/goferState.ts';
import { goferCommands, plausibleGoferId, type GoferContext } from './context.ts';

export interface AssistantTurnInput {
  goferId: string;
  /** The user message this turn answers; null for a turn nobody asked for. */
  replyTo: string | null;
  content: string;
  /** An `ask_user` turn: delivered as a `gofer_question` event. */
  pendingQuery: boolean;
  /** The frozen v1 `responseConstraints` shape; kept on pending queries only. */
  responseConstraints: object | null;
  profile?: GoferProfile;
  discoveryStatus?: DiscoveryStatus;
}

export type AssistantTurnResult = { appended: true; messageId: string } | { appended: false };

/**
 * The brain's reply (engineer C's reactor). Idempotent on `replyTo`: a second turn for the same user
 * message appends nothing, and so does any turn for a deleted or unknown Gofer (no events after deletion).
 */
export async function addAssistantTurn(
  ctx: GoferContext,
  input: AssistantTurnInput,
): Promise<AssistantTurnResult> {
  if (!plausibleGoferId(input.goferId)) return { appended: false };
  const messageId = ctx.ids();
  const { appended } = await goferCommands(ctx)(goferStreamId(input.goferId), {
    type: 'AddAssistantTurn',
    data: {
      messageId,
      replyTo: input.replyTo,
      content: input.content,
      pendingQuery: input.pendingQuery,
      responseConstraints:
        input.responseConstraints === null ? null : JSON.stringify(input.responseConstraints),
      profile: input.profile ?? null,
      discoveryStatus: input.discoveryStatus ?? null,
    },
  });
  return appended.length > 0 ? { appended: true, messageId } : { appended: false };
}
