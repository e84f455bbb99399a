import type { AttachmentAdded, GoferEvent, RagStatus } from '@oan/domain';
import { assertOwnedActive } from './guards.ts';
import type { GoferState } from './goferState.ts';

export type NewAttachment = Omit<AttachmentAdded, 'createdAt'>;

export interface RagOutcome {
  goferId: string;
  attachmentId: string;
  ragStatus: Extract<RagStatus, 'ready' | 'failed'>;
  /** The parsed text, only with `ready`. */
  knowledge: string | null;
}

/** An upload of the owner's active Gofer is recorded once (ids are fresh UUIDs). */
export function addAttachment(state: GoferState, input: NewAttachment, now: string): GoferEvent[] {
  assertOwnedActive(state, input.accountId); // probe-safe: the same 403 for unknown, deleted and foreign
  if (state.attachments.has(input.attachmentId)) return [];
  return [{ type: 'AttachmentAdded', data: { ...input, createdAt: now } }];
}

/**
 * Only `processing` → a final status, once. A replayed or redelivered AttachmentAdded, an
 * attachment already final, or a deleted Gofer (nothing new after deletion) yields nothing.
 */
export function recordRagStatus(state: GoferState, input: RagOutcome, now: string): GoferEvent[] {
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
