import type { AttachmentAdded, GoferEvent, RagStatus } from '@oan/domain';
import { assertOwnedActive } from '../domain/gofer.ts';
import type { GoferState } from '../domain/goferState.ts';
import { runGoferCommand, type GoferContext } from './context.ts';

export type NewAttachment = Omit<AttachmentAdded, 'createdAt'>;

/** Pure: an upload of the owner's active Gofer is recorded once (ids are fresh UUIDs). */
export function decideAddAttachment(state: GoferState, input: NewAttachment, now: string): GoferEvent[] {
  assertOwnedActive(state, input.accountId); // §6: the same 403 for unknown, deleted and foreign
  if (state.attachments.has(input.attachmentId)) return [];
  return [{ type: 'AttachmentAdded', data: { ...input, createdAt: now } }];
}

/**
 * §4.4 (16), (17): records a stored upload on its Gofer. The bytes are already in object storage;
 * the caller removes them when this throws (nothing then refers to them).
 */
export async function addAttachment(ctx: GoferContext, input: NewAttachment): Promise<{ appended: boolean }> {
  const { appended } = await runGoferCommand(ctx, input.goferId, (state, now) => ({
    accountId: input.accountId,
    events: decideAddAttachment(state, input, now),
  }));
  return { appended: appended.length > 0 };
}

export interface RagOutcome {
  goferId: string;
  attachmentId: string;
  ragStatus: Extract<RagStatus, 'ready' | 'failed'>;
  /** The parsed text, only with `ready`. */
  knowledge: string | null;
}

/**
 * Pure: only `processing` → a final status, once. A replayed or redelivered AttachmentAdded, an
 * attachment already final, or a deleted Gofer (A35: nothing new after deletion) yields nothing.
 */
export function decideRagStatus(state: GoferState, input: RagOutcome, now: string): GoferEvent[] {
  if (state.status !== 'active') return [];
  if (state.attachments.get(input.attachmentId)?.ragStatus !== 'processing') return [];
  return [
    {
      type: 'AttachmentRagStatusChanged',
      data: {
        goferId: state.goferId,
        accountId: state.accountId,
        attachmentId: input.attachmentId,
        ragStatus: input.ragStatus,
        knowledge: input.ragStatus === 'ready' ? input.knowledge : null,
        changedAt: now,
      },
    },
  ];
}

/** Appends the outcome of background parsing (the RAG reactor); idempotent, see decideRagStatus. */
export async function setRagStatus(ctx: GoferContext, input: RagOutcome): Promise<{ appended: boolean }> {
  const { appended } = await runGoferCommand(ctx, input.goferId, (state, now) =>
    state.status === 'none'
      ? null
      : { accountId: state.accountId, events: decideRagStatus(state, input, now) },
  );
  return { appended: appended.length > 0 };
}
