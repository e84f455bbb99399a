import { sql, type EntityManager } from '@oan/db';
import type { NotificationSpec } from '../notifications';
import type { Projection } from './types';

type Data = Record<string, unknown>;
const str = (d: Data, k: string): string => (typeof d[k] === 'string' ? d[k] : '');
const intOrNull = (d: Data, k: string): number | null =>
  typeof d[k] === 'number' || typeof d[k] === 'bigint' ? Number(d[k]) : null;
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
const records = (v: unknown): Data[] =>
  Array.isArray(v) ? v.filter((x): x is Data => x !== null && typeof x === 'object') : [];
/** Ids as a parameter: arrays go to Postgres as JSON text (`?::jsonb`). */
const IDS = '(select jsonb_array_elements_text(?::jsonb))';

/**
 * The conversations context's read models (§4.7): `read.conversations`, `read.conversation_attachments`
 * and `read.conversation_messages`; and its one notification, `relay_message` to the account that did
 * not write the message (§8.6). Events are keyed by the acting account, so one conversation's events
 * span partitions: only the per-sender order (upload → send → recall) is guaranteed, and every write
 * here either stands alone or is guarded to move forward only, so a redelivered event changes nothing.
 */
export const conversationsProjection: Projection = {
  handles: new Set([
    'ConversationOpened',
    'ConversationAttachmentUploaded',
    'ConversationMessageSent',
    'ConversationMessageRecalled',
    'ConversationClosed',
  ]),
  async apply(em, event): Promise<NotificationSpec[]> {
    const d = event.data;
    const conversationId = str(d, 'conversationId');
    switch (event.type) {
      case 'ConversationOpened':
        await sql(
          em,
          `insert into read.conversations (id, match_id, thread_id, account_a, gofer_a, account_b, gofer_b,
             status, opened_at) values (?, ?, ?, ?, ?, ?, ?, 'open', ?) on conflict (id) do nothing`,
          [
            conversationId,
            str(d, 'matchId'),
            str(d, 'threadId'),
            str(d, 'accountA'),
            str(d, 'goferA'),
            str(d, 'accountB'),
            str(d, 'goferB'),
            str(d, 'openedAt'),
          ],
        );
        return [];
      case 'ConversationAttachmentUploaded':
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
            str(d, 'attachmentId'),
            conversationId,
            str(d, 'uploaderAccountId'),
            str(d, 'kind'),
            str(d, 'name'),
            str(d, 'mimeType'),
            Number(d.size),
            intOrNull(d, 'width'),
            intOrNull(d, 'height'),
            str(d, 'storageKey'),
            str(d, 'uploadedAt'),
            conversationId,
          ],
        );
        return [];
      case 'ConversationMessageSent':
        return messageSent(em, d);
      case 'ConversationMessageRecalled':
        await sql(
          em,
          `update read.conversation_messages set recalled_at = ?
           where id = ? and conversation_id = ? and recalled_at is null`,
          [str(d, 'recalledAt'), str(d, 'messageId'), conversationId],
        );
        await deleteAttachments(em, conversationId, strings(d.attachmentIds), str(d, 'recalledAt'));
        return [];
      case 'ConversationClosed':
        await sql(
          em,
          `update read.conversations set status = 'closed', closed_reason = ?, closed_at = ?
           where id = ? and status = 'open'`,
          [str(d, 'reason'), str(d, 'closedAt'), conversationId],
        );
        await deleteAttachments(em, conversationId, strings(d.attachmentIds), str(d, 'closedAt'));
        return [];
      default:
        return [];
    }
  },
};

async function deleteAttachments(em: EntityManager, conversationId: string, ids: string[], at: string) {
  if (ids.length === 0) return;
  await sql(
    em,
    `update read.conversation_attachments set deleted_at = ?
     where conversation_id = ? and id in ${IDS} and deleted_at is null`,
    [at, conversationId, JSON.stringify(ids)],
  );
}

/** `OanConversationAttachment` (§4.7): exactly these keys; width/height only when known. */
function wireAttachment(a: Data): Data {
  const width = intOrNull(a, 'width');
  const height = intOrNull(a, 'height');
  return {
    attachmentId: str(a, 'attachmentId'),
    kind: str(a, 'kind'),
    name: str(a, 'name'),
    mimeType: str(a, 'mimeType'),
    size: Number(a.size),
    ...(width === null ? {} : { width }),
    ...(height === null ? {} : { height }),
  };
}

async function messageSent(em: EntityManager, d: Data): Promise<NotificationSpec[]> {
  const conversationId = str(d, 'conversationId');
  const messageId = str(d, 'messageId');
  const sender = str(d, 'senderAccountId');
  const recipient = str(d, 'recipientAccountId');
  const createdAt = str(d, 'createdAt');
  const attachments = records(d.attachments);
  const attachmentIds = attachments.map((a) => str(a, 'attachmentId'));
  await sql(
    em,
    `insert into read.conversation_messages (id, conversation_id, sender_account_id, recipient_account_id,
       content, attachment_ids, change_sequence, created_at) values (?, ?, ?, ?, ?, ?::jsonb, ?, ?)
     on conflict do nothing`,
    [
      messageId,
      conversationId,
      sender,
      recipient,
      str(d, 'content'),
      JSON.stringify(attachmentIds),
      String(d.changeSequence),
      createdAt,
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
  // §8.6: only the account that did not write the message; the sender gets no echo (§4.7).
  if (recipient === sender) return [];
  return [
    {
      recipient,
      type: 'relay_message',
      source: 'counterpart_party',
      conversationId,
      reply: `/conversations/${conversationId}/messages`,
      // §8.7: `attachments` omitted entirely (never `[]`) when the message has none.
      payload: {
        messageId,
        content: str(d, 'content'),
        createdAt,
        ...(attachments.length > 0 ? { attachments: attachments.map(wireAttachment) } : {}),
      },
      createdAt,
    },
  ];
}
