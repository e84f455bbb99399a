import { sql, type EntityManager } from '@oan/db';
import type { ConversationEvent, DeviceKeyEvent } from '@oan/domain';
import { projection, type NotificationSpec, type StoredEvent } from '../types.ts';
import { keyChanged, numOrNull, relayMessage, relayRevision, wireSealed } from './notifications.ts';

type Event<T extends ConversationEvent['type']> = StoredEvent<Extract<ConversationEvent, { type: T }>>;
/** Ids as a parameter: arrays go to Postgres as JSON text (`?::jsonb`). */
const IDS = '(select jsonb_array_elements_text(?::jsonb))';

/**
 * The conversations context's read models (the post-match channels): `read.conversations`,
 * `read.conversation_attachments` and `read.conversation_messages`, and the notification of
 * `notifications.ts`. Events are keyed by the acting account, so one conversation's events span
 * partitions: only the per-sender order (upload → send → correct → retract) is guaranteed, and every write here
 * either stands alone or is guarded to move forward only, so a redelivered event changes nothing.
 */
export const conversationsProjection = projection<ConversationEvent>({
  async ConversationOpened(em, { data: d }) {
    await sql(
      em,
      `insert into read.conversations (id, match_id, thread_id, account_a, gofer_a, account_b, gofer_b,
         status, opened_at) values (?, ?, ?, ?, ?, ?, ?, 'open', ?) on conflict (id) do nothing`,
      [d.conversationId, d.matchId, d.threadId, d.accountA, d.goferA, d.accountB, d.goferB, d.openedAt],
    );
    return [];
  },
  async ConversationAttachmentUploaded(em, { data: d }) {
    // A close keyed by the other account may have been applied first (another partition): an
    // upload into a closed conversation is born deleted, as the close would have marked it.
    await sql(
      em,
      `insert into read.conversation_attachments (id, conversation_id, uploader_account_id, kind, name,
         mime_type, size, width, height, storage_key, created_at, deleted_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
         (select closed_at from read.conversations where id = ? and status = 'closed'))
       on conflict (id) do nothing`,
      [
        d.attachmentId,
        d.conversationId,
        d.uploaderAccountId,
        d.kind,
        d.name,
        d.mimeType,
        Number(d.size),
        numOrNull(d.width),
        numOrNull(d.height),
        d.storageKey,
        d.uploadedAt,
        d.conversationId,
      ],
    );
    return [];
  },
  ConversationMessageSent: messageSent,
  // Older logs' withdrawal (before revisions): the same as a retraction, and it told nobody.
  async ConversationMessageRecalled(em, { data: d }) {
    await sql(
      em,
      `update read.conversation_messages set recalled_at = ?, content = '', sealed = null
       where id = ? and conversation_id = ? and recalled_at is null`,
      [d.recalledAt, d.messageId, d.conversationId],
    );
    await deleteAttachments(em, d.conversationId, d.attachmentIds, d.recalledAt);
    return [];
  },
  async ConversationMessageCorrected(em, event) {
    const d = event.data;
    // The sender's events share a partition: its corrections arrive in order, a redelivery changes nothing.
    await sql(
      em,
      `update read.conversation_messages set content = ?, sealed = ?::jsonb, revision_state = 'corrected',
         revision_count = ?, revised_at = ?
       where id = ? and conversation_id = ? and recalled_at is null and coalesce(revision_count, 0) < ?`,
      [
        d.content,
        d.sealed === null ? null : JSON.stringify(wireSealed(d.sealed)),
        d.count,
        d.correctedAt,
        d.messageId,
        d.conversationId,
        d.count,
      ],
    );
    return relayRevision(event);
  },
  async ConversationMessageRetracted(em, event) {
    const d = event.data;
    await sql(
      em,
      `update read.conversation_messages set content = '', sealed = null, recalled_at = ?,
         revision_state = 'retracted', revision_count = ?, revised_at = ?
       where id = ? and conversation_id = ? and recalled_at is null`,
      [d.retractedAt, d.count, d.retractedAt, d.messageId, d.conversationId],
    );
    await deleteAttachments(em, d.conversationId, d.attachmentIds, d.retractedAt);
    return relayRevision(event);
  },
  async ConversationClosed(em, { data: d }) {
    await sql(
      em,
      `update read.conversations set status = 'closed', closed_reason = ?, closed_at = ?
       where id = ? and status = 'open'`,
      [d.reason, d.closedAt, d.conversationId],
    );
    await deleteAttachments(em, d.conversationId, d.attachmentIds, d.closedAt);
    return [];
  },
  // A notice only; the key directory is the conversations service's own (read on its write side).
  ConversationKeyChanged: async (_em, event) => keyChanged(event),
});

/**
 * The key directory's events change no read model: the routes read the keys where a sealed send is
 * checked against them (the conversations write side), and the other sides hear of a change through
 * `ConversationKeyChanged`.
 */
export const deviceKeysProjection = projection<DeviceKeyEvent>({
  DeviceKeyPublished: null,
  DeviceKeyRetired: null,
});

async function deleteAttachments(em: EntityManager, conversationId: string, ids: string[], at: string) {
  if (ids.length === 0) return;
  await sql(
    em,
    `update read.conversation_attachments set deleted_at = ?
     where conversation_id = ? and id in ${IDS} and deleted_at is null`,
    [at, conversationId, JSON.stringify(ids)],
  );
}

async function messageSent(
  em: EntityManager,
  event: Event<'ConversationMessageSent'>,
): Promise<NotificationSpec[]> {
  const d = event.data;
  const { conversationId, messageId, createdAt, attachments } = d;
  const sender = d.senderAccountId;
  const recipient = d.recipientAccountId;
  const attachmentIds = attachments.map((a) => a.attachmentId);
  await sql(
    em,
    `insert into read.conversation_messages (id, conversation_id, sender_account_id, recipient_account_id,
       content, attachment_ids, change_sequence, created_at, sealed) values (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?::jsonb)
     on conflict do nothing`,
    [
      messageId,
      conversationId,
      sender,
      recipient,
      d.content,
      JSON.stringify(attachmentIds),
      String(d.changeSequence),
      createdAt,
      d.sealed ? JSON.stringify(wireSealed(d.sealed)) : null,
    ],
  );
  if (attachmentIds.length > 0) {
    // The uploads are the sender's, keyed like this event, so their rows are already here.
    await sql(
      em,
      `update read.conversation_attachments set message_id = ?
       where conversation_id = ? and id in ${IDS} and message_id is null`,
      [messageId, conversationId, JSON.stringify(attachmentIds)],
    );
  }
  return relayMessage(event);
}
