import type { ConversationEvent, MessageAttachment, SealedContent } from '@oan/domain';
import type { StoredMessage, StoredRevision } from '../domain/conversationState.ts';
import { currentKeysOf } from '../infra/deviceKeys.ts';
import { attachmentsUsedElsewhere, loadAttachments, loadMessage, loadRevision } from '../infra/store.ts';
import { ensureConversation, runConversationCommand, type ConversationContext } from './context.ts';

export interface Revision {
  action: 'correct' | 'retract';
  /** Required by the revise route; DELETE has none. */
  clientMessageId: string | null;
  content?: string | undefined;
  sealed?: SealedContent | undefined;
  allowMissing?: boolean | undefined;
}

/** The message as history shows it after a revision (the revise route's answer). */
export interface RevisedMessage {
  message: Pick<StoredMessage, 'id' | 'senderAccountId' | 'changeSequence' | 'createdAt'>;
  content: string;
  sealed: SealedContent | null;
  attachments: MessageAttachment[];
  revision: { state: 'corrected' | 'retracted'; count: number; at: string };
}

/**
 * Corrects or retracts the caller's message (docs/sealed-messages.md "Revisions"), deciding on the
 * message, the caller's earlier revision under the same clientMessageId and the message's files, all
 * read under the conversation's lock. A retry answers what the first revision answered. Returns that
 * answer and the storage keys of the files a retraction deleted (the caller deletes them, best effort).
 */
export async function reviseMessage(
  ctx: ConversationContext,
  conversationId: string,
  accountId: string,
  messageId: string,
  revision: Revision,
): Promise<{ answer: RevisedMessage; storageKeys: string[] }> {
  await ensureConversation(ctx, conversationId, accountId);
  const revisionId = ctx.ids();
  let loaded: { message: StoredMessage | null; prior: StoredRevision | null; files: Files } = {
    message: null,
    prior: null,
    files: [],
  };
  const { appended } = await runConversationCommand(ctx, conversationId, async (em, state) => {
    const convId = state.status === 'none' ? null : state.id;
    const message = convId === null ? null : await loadMessage(em, convId, messageId);
    const prior =
      convId === null || revision.clientMessageId === null
        ? null
        : await loadRevision(em, convId, accountId, revision.clientMessageId);
    const files = convId === null || !message ? [] : await loadAttachments(em, convId, message.attachmentIds);
    const usedElsewhere =
      convId === null || revision.action !== 'retract'
        ? []
        : await attachmentsUsedElsewhere(em, convId, messageId, message?.attachmentIds ?? []);
    const keys =
      state.status === 'open' && revision.sealed !== undefined
        ? await currentKeysOf(em, [state.accountA, state.accountB])
        : [];
    loaded = { message, prior, files };
    return {
      type: 'ReviseMessage',
      data: {
        ...revision,
        accountId,
        messageId,
        revisionId,
        message,
        prior,
        attachments: files,
        usedElsewhere,
        keys,
      },
    };
  });
  const { message, prior, files } = loaded;
  if (!message) throw new Error('A revision was decided without its message');
  const [event] = appended as unknown as ConversationEvent[];
  if (!event) {
    // A retry: what the first revision answered.
    if (!prior) throw new Error('A revision appended nothing without an earlier one');
    return { answer: answerOf(message, files, prior), storageKeys: [] };
  }
  const fresh = storedRevisionOf(event);
  const deleted =
    event.type === 'ConversationMessageRetracted' ? new Set(event.data.attachmentIds) : new Set();
  return {
    answer: answerOf(message, files, fresh),
    storageKeys: files.filter((f) => deleted.has(f.attachmentId)).map((f) => f.storageKey),
  };
}

type Files = Awaited<ReturnType<typeof loadAttachments>>;

/** What the answer needs of the revision just appended (a correction or a retraction). */
function storedRevisionOf(
  event: ConversationEvent,
): Pick<StoredRevision, 'action' | 'content' | 'sealed' | 'count' | 'at'> {
  if (event.type === 'ConversationMessageCorrected') {
    const d = event.data;
    return { action: 'correct', content: d.content, sealed: d.sealed, count: d.count, at: d.correctedAt };
  }
  if (event.type === 'ConversationMessageRetracted') {
    const d = event.data;
    return { action: 'retract', content: '', sealed: null, count: d.count, at: d.retractedAt };
  }
  throw new Error(`A revision appended ${event.type}`);
}

/** A retracted message has no content, no sealed content and no files left. */
function answerOf(
  message: StoredMessage,
  files: Files,
  r: Pick<StoredRevision, 'action' | 'content' | 'sealed' | 'count' | 'at'>,
): RevisedMessage {
  const retracted = r.action === 'retract';
  const byId = new Map(files.filter((f) => !f.deleted).map((f) => [f.attachmentId, f]));
  const attachments = retracted
    ? []
    : message.attachmentIds.flatMap((id) => {
        const f = byId.get(id);
        if (!f) return [];
        const { attachmentId, kind, name, mimeType, size, width, height } = f;
        return [{ attachmentId, kind, name, mimeType, size, width, height }];
      });
  return {
    message,
    content: retracted ? '' : r.content,
    sealed: retracted ? null : r.sealed,
    attachments,
    revision: { state: retracted ? 'retracted' : 'corrected', count: r.count, at: r.at },
  };
}
