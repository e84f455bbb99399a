import { sql, type EntityManager } from '@oan/db';
import type { NotificationSpec } from '../notifications';
import type { DomainEvent, Projection } from './types';

type Data = Record<string, unknown>;
const str = (d: Data, k: string): string => (typeof d[k] === 'string' ? d[k] : '');
const strOrNull = (d: Data, k: string): string | null => (typeof d[k] === 'string' ? d[k] : null);
const json = (v: unknown): string => JSON.stringify(v ?? []);

/**
 * The gofers context's read models (the Gofer list, role-chat history, attachments) and its two
 * notifications: an assistant turn becomes `gofer_message`, or `gofer_question` when it waits for the
 * owner (§8.6); the owner's own messages never become events (§12 line 41).
 */
export const gofersProjection: Projection = {
  handles: new Set([
    'GoferCreated',
    'ChatMessageAdded',
    'GoferProfileUpdated',
    'GoferDiscoveryStatusChanged',
    'GoferDeleted',
    'AttachmentAdded',
    'AttachmentRagStatusChanged',
  ]),
  async apply(em, event): Promise<NotificationSpec[]> {
    const d = event.data;
    switch (event.type) {
      case 'GoferCreated':
        await sql(
          em,
          `insert into read.gofers (id, account_id, chat_id, name, description, locale, source_platform,
             discovery_status, human_review_triggers, "values", demands, created_at, updated_at)
           values (?, ?, ?, ?, ?, ?, ?, 'in_discovery', ?::jsonb, '[]', '[]', ?, ?) on conflict (id) do nothing`,
          [
            str(d, 'goferId'),
            event.accountId,
            str(d, 'chatId'),
            str(d, 'name'),
            str(d, 'description'),
            str(d, 'locale'),
            str(d, 'sourcePlatform'),
            json(d.humanReviewTriggers),
            str(d, 'createdAt'),
            str(d, 'createdAt'),
          ],
        );
        return [];
      case 'ChatMessageAdded':
        return chatMessage(em, event);
      case 'GoferProfileUpdated':
        await sql(
          em,
          `update read.gofers set name = ?, description = ?, "values" = ?::jsonb, demands = ?::jsonb, updated_at = ? where id = ?`,
          [
            str(d, 'name'),
            str(d, 'description'),
            json(d.values),
            json(d.demands),
            str(d, 'updatedAt'),
            str(d, 'goferId'),
          ],
        );
        return [];
      case 'GoferDiscoveryStatusChanged':
        await sql(em, 'update read.gofers set discovery_status = ?, updated_at = ? where id = ?', [
          str(d, 'status'),
          str(d, 'changedAt'),
          str(d, 'goferId'),
        ]);
        return [];
      case 'GoferDeleted':
        // §4.4 (15): the Gofer's data cascades; attachments keep a tombstone for storage clean-up.
        await sql(em, 'update read.gofers set deleted_at = coalesce(deleted_at, ?) where id = ?', [
          str(d, 'deletedAt'),
          str(d, 'goferId'),
        ]);
        await sql(em, 'delete from read.gofer_messages where gofer_id = ?', [str(d, 'goferId')]);
        await sql(
          em,
          'update read.gofer_attachments set deleted_at = coalesce(deleted_at, ?) where gofer_id = ?',
          [str(d, 'deletedAt'), str(d, 'goferId')],
        );
        return [];
      case 'AttachmentAdded':
        await sql(
          em,
          `insert into read.gofer_attachments (id, gofer_id, account_id, kind, name, mime_type, size, width, height,
             storage_key, rag_status, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (id) do nothing`,
          [
            str(d, 'attachmentId'),
            str(d, 'goferId'),
            event.accountId,
            str(d, 'kind'),
            str(d, 'name'),
            str(d, 'mimeType'),
            Number(d.size),
            d.width ?? null,
            d.height ?? null,
            str(d, 'storageKey'),
            str(d, 'ragStatus'),
            str(d, 'createdAt'),
          ],
        );
        return [];
      case 'AttachmentRagStatusChanged':
        await sql(em, 'update read.gofer_attachments set rag_status = ?, knowledge = ? where id = ?', [
          str(d, 'ragStatus'),
          strOrNull(d, 'knowledge'),
          str(d, 'attachmentId'),
        ]);
        return [];
      default:
        return [];
    }
  },
};

async function chatMessage(em: EntityManager, event: DomainEvent): Promise<NotificationSpec[]> {
  const d = event.data;
  const goferId = str(d, 'goferId');
  await sql(
    em,
    `insert into read.gofer_messages (id, gofer_id, account_id, chat_id, role, content, kind, pairing, pending_query,
       response_constraints, reply_to, attachment_ids, created_at, position)
     values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?::jsonb, ?, ?::jsonb, ?, ?) on conflict (id) do nothing`,
    [
      str(d, 'messageId'),
      goferId,
      event.accountId,
      str(d, 'chatId'),
      str(d, 'role'),
      str(d, 'content'),
      strOrNull(d, 'kind'),
      strOrNull(d, 'pairing'),
      d.pendingQuery === true,
      strOrNull(d, 'responseConstraints'),
      strOrNull(d, 'replyTo'),
      json(d.attachmentIds),
      str(d, 'createdAt'),
      event.position?.toString() ?? null,
    ],
  );
  if (d.role !== 'assistant') return [];
  const pending = d.pendingQuery === true;
  const constraints = strOrNull(d, 'responseConstraints');
  return [
    {
      recipient: event.accountId,
      type: pending ? 'gofer_question' : 'gofer_message',
      source: 'own_gofer',
      goferId,
      chatId: str(d, 'chatId'),
      reply: `/gofers/${goferId}/chat/messages`,
      // A27: only a pending query carries the frozen constraints shape.
      ...(pending && constraints
        ? { responseConstraints: JSON.parse(constraints) as Record<string, unknown> }
        : {}),
      payload: { messageId: str(d, 'messageId'), content: str(d, 'content'), createdAt: str(d, 'createdAt') },
      createdAt: str(d, 'createdAt'),
    },
  ];
}
