import { insertRows, sql, type EntityManager } from '@oan/db';
import type { GoferEvent } from '@oan/domain';
import { projection, type NotificationSpec, type StoredEvent } from '../types.ts';
import { chatNotifications } from './notifications.ts';

type Event<T extends GoferEvent['type']> = StoredEvent<Extract<GoferEvent, { type: T }>>;
const json = (v: unknown): string => JSON.stringify(v ?? []);

/**
 * The two inserts every Gofer and role-chat turn makes, as one statement for any number of rows
 * (`insertRows`: the projector writes a batch's rows together).
 */
const INSERT_GOFERS = `insert into read.gofers (id, account_id, chat_id, name, description, locale, source_platform,
    discovery_status, human_review_triggers, "values", demands, created_at, updated_at)
  select id, account_id, chat_id, name, description, locale, source_platform, 'in_discovery',
    human_review_triggers, '[]', '[]', created_at, created_at
  from jsonb_to_recordset(?::jsonb) as x(id text, account_id text, chat_id text, name text, description text,
    locale text, source_platform text, human_review_triggers jsonb, created_at timestamptz)
  on conflict (id) do nothing`;
const INSERT_GOFER_MESSAGES = `insert into read.gofer_messages (id, gofer_id, account_id, chat_id, role, content, kind,
    pairing, pending_query, response_constraints, reply_to, attachment_ids, created_at, position)
  select id, gofer_id, account_id, chat_id, role, content, kind, pairing::jsonb, pending_query,
    response_constraints::jsonb, reply_to, attachment_ids, created_at, position
  from jsonb_to_recordset(?::jsonb) as x(id text, gofer_id text, account_id text, chat_id text, role text,
    content text, kind text, pairing text, pending_query boolean, response_constraints text, reply_to text,
    attachment_ids jsonb, created_at timestamptz, position bigint)
  on conflict (id) do nothing`;

/**
 * The gofers context's projection: `read.gofers`, `read.gofer_messages` and `read.gofer_attachments`,
 * and the role-chat notifications of `notifications.ts`. Inserts do nothing on a known id and updates
 * set the event's values, so a redelivered event changes nothing.
 */
export const gofersProjection = projection<GoferEvent>({
  async GoferCreated(em, { partitionKey: accountId, data: d }) {
    await insertRows(em, INSERT_GOFERS, {
      id: d.goferId,
      account_id: accountId,
      chat_id: d.chatId,
      name: d.name,
      description: d.description,
      locale: d.locale,
      source_platform: d.sourcePlatform,
      human_review_triggers: d.humanReviewTriggers ?? [],
      created_at: d.createdAt,
    });
    return [];
  },
  ChatMessageAdded: chatMessage,
  async GoferProfileUpdated(em, { data: d }) {
    await sql(
      em,
      `update read.gofers set name = ?, description = ?, "values" = ?::jsonb, demands = ?::jsonb, updated_at = ? where id = ?`,
      [d.name, d.description, json(d.values), json(d.demands), d.updatedAt, d.goferId],
    );
    return [];
  },
  async GoferDiscoveryStatusChanged(em, { data: d }) {
    await sql(em, 'update read.gofers set discovery_status = ?, updated_at = ? where id = ?', [
      d.status,
      d.changedAt,
      d.goferId,
    ]);
    return [];
  },
  async GoferDeleted(em, { data: d }) {
    // Deleting a Gofer cascades to its data; attachments keep a tombstone for storage clean-up.
    await sql(em, 'update read.gofers set deleted_at = coalesce(deleted_at, ?) where id = ?', [
      d.deletedAt,
      d.goferId,
    ]);
    await sql(em, 'delete from read.gofer_messages where gofer_id = ?', [d.goferId]);
    await sql(
      em,
      'update read.gofer_attachments set deleted_at = coalesce(deleted_at, ?) where gofer_id = ?',
      [d.deletedAt, d.goferId],
    );
    return [];
  },
  async AttachmentAdded(em, { partitionKey: accountId, data: d }) {
    await sql(
      em,
      `insert into read.gofer_attachments (id, gofer_id, account_id, kind, name, mime_type, size, width, height,
         storage_key, rag_status, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (id) do nothing`,
      [
        d.attachmentId,
        d.goferId,
        accountId,
        d.kind,
        d.name,
        d.mimeType,
        Number(d.size),
        d.width ?? null,
        d.height ?? null,
        d.storageKey,
        d.ragStatus,
        d.createdAt,
      ],
    );
    return [];
  },
  async AttachmentRagStatusChanged(em, { data: d }) {
    await sql(em, 'update read.gofer_attachments set rag_status = ?, knowledge = ? where id = ?', [
      d.ragStatus,
      d.knowledge ?? null,
      d.attachmentId,
    ]);
    return [];
  },
  // The ConnectOnion relay's own directory (read.agents) lists a published Gofer; the role-chat rows
  // of its relay turns arrive as ChatMessageAdded (kind 'relay'). Nothing to keep here.
  GoferRelayPublished: null,
  GoferRelayUnpublished: null,
  // ADR 0036: what links a caller's question to its channel is the gofers service's own; the rows
  // that ask the owner and tell them what became of the answer arrive as ChatMessageAdded.
  CallerQuestionAsked: null,
  CallerQuestionAnswered: null,
  CallerQuestionWithdrawn: null,
  // ADR 0035: the card is served from the gofers schema's own row, the A2A turns arrive as
  // ChatMessageAdded (kind 'a2a') and the tasks have their read model (../a2a/).
  GoferA2APublished: null,
  GoferA2AUnpublished: null,
});

async function chatMessage(em: EntityManager, event: Event<'ChatMessageAdded'>): Promise<NotificationSpec[]> {
  const d = event.data;
  const goferId = d.goferId;
  await insertRows(em, INSERT_GOFER_MESSAGES, {
    id: d.messageId,
    gofer_id: goferId,
    account_id: event.partitionKey,
    chat_id: d.chatId,
    role: d.role,
    content: d.content,
    kind: d.kind ?? null,
    pairing: d.pairing ?? null,
    pending_query: d.pendingQuery === true,
    response_constraints: d.responseConstraints ?? null,
    reply_to: d.replyTo ?? null,
    attachment_ids: d.attachmentIds ?? [],
    created_at: d.createdAt,
    position: event.position?.toString() ?? null,
  });
  return chatNotifications(event);
}
