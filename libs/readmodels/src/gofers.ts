import { Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import type { GoferEvent } from '@oan/domain';
import { projection, type NotificationSpec, type StoredEvent } from './types';

class CreateGofersReadModels extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.gofers (
      id text primary key, account_id text not null, chat_id text not null, name text not null,
      description text not null, locale text not null, source_platform text not null,
      discovery_status text not null, human_review_triggers jsonb not null, "values" jsonb not null,
      demands jsonb not null, created_at timestamptz not null, updated_at timestamptz not null,
      deleted_at timestamptz)`);
    this.addSql('create index if not exists gofers_account on read.gofers (account_id, created_at)');
    // Discovery's candidate filter (services/matching reactors/discovery.ts): ready, not deleted.
    this.addSql(`create index if not exists gofers_ready_for_discovery on read.gofers (id)
      where discovery_status = 'ready_for_pairing' and deleted_at is null`);
    this.addSql(`create table if not exists read.gofer_messages (
      id text primary key, gofer_id text not null, account_id text not null, chat_id text not null,
      role text not null, content text not null, kind text, pairing jsonb, pending_query boolean not null,
      response_constraints jsonb, reply_to text, attachment_ids jsonb not null,
      created_at timestamptz not null, position bigint)`);
    this.addSql(
      'create index if not exists gofer_messages_chat on read.gofer_messages (gofer_id, created_at, position)',
    );
    this.addSql(`create table if not exists read.gofer_attachments (
      id text primary key, gofer_id text not null, account_id text not null, kind text not null,
      name text not null, mime_type text not null, size bigint not null, width integer, height integer,
      storage_key text not null, rag_status text not null, knowledge text,
      created_at timestamptz not null, deleted_at timestamptz)`);
    this.addSql('create index if not exists gofer_attachments_gofer on read.gofer_attachments (gofer_id)');
  }
}

/** This read model's tables, in migration order. */
export const gofersTables: MigrationDef[] = [{ name: 'read-0004-gofers', class: CreateGofersReadModels }];

type Event<T extends GoferEvent['type']> = StoredEvent<Extract<GoferEvent, { type: T }>>;
const json = (v: unknown): string => JSON.stringify(v ?? []);

/**
 * The gofers context's read models (the Gofer list, role-chat history, attachments) and its two
 * notifications: an assistant turn becomes `gofer_message`, or `gofer_question` when it waits for the
 * owner (§8.6); the owner's own messages never become events.
 */
export const gofersProjection = projection<GoferEvent>({
  async GoferCreated(em, { accountId, data: d }) {
    await sql(
      em,
      `insert into read.gofers (id, account_id, chat_id, name, description, locale, source_platform,
         discovery_status, human_review_triggers, "values", demands, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, 'in_discovery', ?::jsonb, '[]', '[]', ?, ?) on conflict (id) do nothing`,
      [
        d.goferId,
        accountId,
        d.chatId,
        d.name,
        d.description,
        d.locale,
        d.sourcePlatform,
        json(d.humanReviewTriggers),
        d.createdAt,
        d.createdAt,
      ],
    );
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
    // §4.4 (15): the Gofer's data cascades; attachments keep a tombstone for storage clean-up.
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
  async AttachmentAdded(em, { accountId, data: d }) {
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
});

async function chatMessage(em: EntityManager, event: Event<'ChatMessageAdded'>): Promise<NotificationSpec[]> {
  const d = event.data;
  const goferId = d.goferId;
  await sql(
    em,
    `insert into read.gofer_messages (id, gofer_id, account_id, chat_id, role, content, kind, pairing, pending_query,
       response_constraints, reply_to, attachment_ids, created_at, position)
     values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?::jsonb, ?, ?::jsonb, ?, ?) on conflict (id) do nothing`,
    [
      d.messageId,
      goferId,
      event.accountId,
      d.chatId,
      d.role,
      d.content,
      d.kind ?? null,
      d.pairing ?? null,
      d.pendingQuery === true,
      d.responseConstraints ?? null,
      d.replyTo ?? null,
      json(d.attachmentIds),
      d.createdAt,
      event.position?.toString() ?? null,
    ],
  );
  if (d.role !== 'assistant') return [];
  const pending = d.pendingQuery === true;
  const constraints = d.responseConstraints ?? null;
  return [
    {
      recipient: event.accountId,
      type: pending ? 'gofer_question' : 'gofer_message',
      source: 'own_gofer',
      goferId,
      chatId: d.chatId,
      reply: `/gofers/${goferId}/chat/messages`,
      // A27: only a pending query carries the frozen constraints shape.
      ...(pending && constraints
        ? { responseConstraints: JSON.parse(constraints) as Record<string, unknown> }
        : {}),
      payload: { messageId: d.messageId, content: d.content, createdAt: d.createdAt },
      createdAt: d.createdAt,
    },
  ];
}
