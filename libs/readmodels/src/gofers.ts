import { isoUtc, Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import type { DiscoveryStatus, GoferEvent, RagStatus } from '@oan/domain';
import { projection, type NotificationSpec, type StoredEvent } from './types.ts';

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
  // Issue 16: the relay's own directory (read.agents) lists a published Gofer; the role-chat rows
  // of its relay turns arrive as ChatMessageAdded (kind 'relay'). Nothing to keep here.
  GoferRelayPublished: null,
  GoferRelayUnpublished: null,
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

// ---------------------------------------------------------------------------------------------------
// Queries other code may run on these tables (no service writes its own SQL against them).

/** One Gofer of an account's list (§4.4 (12)), its columns named as the API names them. */
export interface GoferListRow {
  goferId: string;
  name: string;
  description: string;
  discoveryStatus: DiscoveryStatus;
  createdAt: string;
}

/** An account's live Gofers, oldest first. */
export function goferList(em: EntityManager, accountId: string): Promise<GoferListRow[]> {
  return sql<GoferListRow>(
    em,
    `select g.id as "goferId", g.name, g.description, g.discovery_status as "discoveryStatus",
            ${isoUtc('g.created_at')} as "createdAt"
       from read.gofers g
      where g.account_id = ? and g.deleted_at is null
      order by g.created_at, g.id`,
    [accountId],
  );
}

/** A Gofer's name, or undefined when it was never projected. */
export async function goferName(em: EntityManager, goferId: string): Promise<string | undefined> {
  const [row] = await sql<{ name: string }>(em, 'select name from read.gofers where id = ?', [goferId]);
  return row?.name;
}

/** What a Gofer shows its counterparts (§8.7), or undefined when it was never projected. */
export interface GoferProfileRow {
  name: string;
  description: string;
  values: unknown;
  demands: unknown;
  deletedAt: Date | null;
}

export async function goferProfile(em: EntityManager, goferId: string): Promise<GoferProfileRow | undefined> {
  const [row] = await sql<GoferProfileRow>(
    em,
    'select name, description, "values", demands, deleted_at as "deletedAt" from read.gofers where id = ?',
    [goferId],
  );
  return row;
}

/** The first of `goferIds` that is deleted, or undefined when none is. */
export async function deletedGoferAmong(em: EntityManager, goferIds: string[]): Promise<string | undefined> {
  if (goferIds.length === 0) return undefined;
  const [row] = await sql<{ id: string }>(
    em,
    `select id from read.gofers where id in (?) and deleted_at is not null
      order by id limit 1`,
    [goferIds],
  );
  return row?.id;
}

/** One live file of a Gofer. */
export interface GoferFileRow {
  id: string;
  kind: 'photo' | 'document';
  name: string;
  mimeType: string;
  size: number;
  width: number | null;
  height: number | null;
  storageKey: string;
}

const FILE_COLUMNS = `id, kind, name, mime_type as "mimeType", size::float8 as size, width, height,
  storage_key as "storageKey"`;

/** Every live photo and document of a Gofer, oldest first. */
export function goferFiles(em: EntityManager, goferId: string): Promise<GoferFileRow[]> {
  return sql<GoferFileRow>(
    em,
    `select ${FILE_COLUMNS} from read.gofer_attachments
      where gofer_id = ? and deleted_at is null order by created_at, id`,
    [goferId],
  );
}

/** The live file `attachmentId` if it belongs to one of `goferIds`. */
export async function goferFileOf(
  em: EntityManager,
  attachmentId: string,
  goferIds: string[],
): Promise<GoferFileRow | undefined> {
  if (goferIds.length === 0) return undefined;
  const [row] = await sql<GoferFileRow>(
    em,
    `select ${FILE_COLUMNS} from read.gofer_attachments
      where id = ? and gofer_id in (?) and deleted_at is null`,
    [attachmentId, goferIds],
  );
  return row;
}

/** One role-chat message with its live attachments, in the message's order (A37). */
export interface GoferMessageRow {
  id: string;
  role: 'user' | 'assistant' | 'system';
  content: string;
  createdAt: string;
  kind: string | null;
  pairing: Record<string, unknown> | null;
  attachments:
    | {
        id: string;
        kind: 'photo' | 'document';
        name: string;
        mimeType: string;
        size: number;
        ragStatus: RagStatus | null;
      }[]
    | null;
}

const MESSAGES = `select m.id, m.role, m.content, m.kind, m.pairing, m.created_at as ts, m.position,
    ${isoUtc('m.created_at')} as "createdAt",
    (select jsonb_agg(jsonb_build_object('id', a.id, 'kind', a.kind, 'name', a.name, 'mimeType', a.mime_type,
                                         'size', a.size, 'ragStatus', a.rag_status) order by x.ord)
       from jsonb_array_elements_text(m.attachment_ids) with ordinality as x(aid, ord)
       join read.gofer_attachments a on a.id = x.aid and a.gofer_id = m.gofer_id and a.deleted_at is null
    ) as attachments
  from read.gofer_messages m where m.gofer_id = ?`;

/** The newest `limit` messages of a Gofer's role-chat, oldest first. */
export function recentGoferMessages(
  em: EntityManager,
  goferId: string,
  limit: number,
): Promise<GoferMessageRow[]> {
  return sql<GoferMessageRow>(
    em,
    `select * from (${MESSAGES} order by m.created_at desc, m.position desc limit ${Number(limit)}) t
      order by ts, position`,
    [goferId],
  );
}

/**
 * The conversation proper after `since` (no system or pairing rows, no pending-query turns), oldest
 * first, at most `limit`.
 */
export function goferMessagesSince(
  em: EntityManager,
  goferId: string,
  since: Date,
  limit: number,
): Promise<GoferMessageRow[]> {
  return sql<GoferMessageRow>(
    em,
    `${MESSAGES} and m.role in ('user', 'assistant') and not m.pending_query and m.created_at > ?::timestamptz
      order by m.created_at, m.position limit ${Number(limit)}`,
    [goferId, since.toISOString()],
  );
}
