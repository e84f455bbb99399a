import { Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import { EventStore, type StoredEvent } from '@oan/eventstore';
import { avroEventValidator, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import type { Conversation, StoredAttachment, StoredMessage } from '../domain/conversation.ts';
import type { ConversationEvent } from '@oan/domain';

/** The conversations event store (`conversations.events`, `conversations.outbox`), Avro-checked. */
export const createConversationStore = () =>
  new EventStore('conversations', avroEventValidator(new SchemaRegistry(SCHEMAS_DIR)));

/**
 * The write side's state of each conversation, kept in the same transaction as every append
 * (`applyToWriteState`), so a command loads one row and the few it needs instead of folding the whole
 * stream: `version` is the stream's version (the optimistic check of the append), the conversation
 * row is the lock that serializes commands, `last_change_sequence` the dense counter (invariant 5).
 * It is derived from the events alone: `rebuildWriteState` recomputes it.
 */
class CreateWriteState extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists conversations.conversations (
      id text primary key, match_id text not null, thread_id text not null,
      account_a text not null, gofer_a text not null, account_b text not null, gofer_b text not null,
      status text not null, version integer not null, last_change_sequence bigint not null default 0)`);
    this.addSql('create index if not exists conversations_gofer_a on conversations.conversations (gofer_a)');
    this.addSql('create index if not exists conversations_gofer_b on conversations.conversations (gofer_b)');
    this.addSql(`create table if not exists conversations.attachments (
      id text primary key, conversation_id text not null, uploader_account_id text not null,
      kind text not null, name text not null, mime_type text not null, size bigint not null,
      width integer, height integer, storage_key text not null, message_id text,
      deleted boolean not null default false)`);
    this.addSql(
      'create index if not exists attachments_conversation on conversations.attachments (conversation_id)',
    );
    this.addSql(`create table if not exists conversations.messages (
      id text primary key, conversation_id text not null, sender_account_id text not null,
      change_sequence bigint not null, recalled boolean not null default false, attachment_ids jsonb not null,
      unique (conversation_id, change_sequence))`);
  }
}

export const conversationMigrations = (store: EventStore): MigrationDef[] => [
  store.migration(),
  { name: 'conversations-0001-write-state', class: CreateWriteState },
];

/** Applies one appended event to the write state (idempotent, so a rebuild can replay everything). */
export async function applyToWriteState(em: EntityManager, stored: StoredEvent): Promise<void> {
  const e = { type: stored.type, data: stored.data } as ConversationEvent;
  const version = stored.streamVersion;
  switch (e.type) {
    case 'ConversationOpened': {
      const d = e.data;
      await sql(
        em,
        `insert into conversations.conversations
           (id, match_id, thread_id, account_a, gofer_a, account_b, gofer_b, status, version)
         values (?, ?, ?, ?, ?, ?, ?, 'open', ?) on conflict (id) do nothing`,
        [d.conversationId, d.matchId, d.threadId, d.accountA, d.goferA, d.accountB, d.goferB, version],
      );
      return;
    }
    case 'ConversationAttachmentUploaded': {
      const d = e.data;
      await sql(
        em,
        `insert into conversations.attachments (id, conversation_id, uploader_account_id, kind, name,
           mime_type, size, width, height, storage_key) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (id) do nothing`,
        [
          d.attachmentId,
          d.conversationId,
          d.uploaderAccountId,
          d.kind,
          d.name,
          d.mimeType,
          d.size,
          d.width,
          d.height,
          d.storageKey,
        ],
      );
      break;
    }
    case 'ConversationMessageSent': {
      // One statement (the send path's round trips, issue 11): the message, its attachments, and the
      // conversation's last changeSequence and version.
      const d = e.data;
      const ids = d.attachments.map((a) => a.attachmentId);
      await sql(
        em,
        `with message as (
           insert into conversations.messages (id, conversation_id, sender_account_id, change_sequence, attachment_ids)
           values (?, ?, ?, ?, ?::jsonb) on conflict (id) do nothing
         ), attached as (
           update conversations.attachments set message_id = ?
            where conversation_id = ? and id in (select jsonb_array_elements_text(?::jsonb))
         )
         update conversations.conversations
            set last_change_sequence = greatest(last_change_sequence, ?), version = greatest(version, ?)
          where id = ?`,
        [
          d.messageId,
          d.conversationId,
          d.senderAccountId,
          d.changeSequence,
          JSON.stringify(ids),
          d.messageId,
          d.conversationId,
          JSON.stringify(ids),
          d.changeSequence,
          version,
          d.conversationId,
        ],
      );
      return;
    }
    case 'ConversationMessageRecalled': {
      const d = e.data;
      await sql(em, 'update conversations.messages set recalled = true where id = ?', [d.messageId]);
      await deleteAttachments(em, d.conversationId, d.attachmentIds);
      break;
    }
    case 'ConversationClosed': {
      const d = e.data;
      await sql(em, `update conversations.conversations set status = 'closed' where id = ?`, [
        d.conversationId,
      ]);
      await deleteAttachments(em, d.conversationId, d.attachmentIds);
      break;
    }
    default: {
      const unexpected: never = e;
      throw new Error(`Unknown conversation event ${(unexpected as { type: string }).type}`);
    }
  }
  await sql(em, 'update conversations.conversations set version = greatest(version, ?) where id = ?', [
    version,
    (e.data as { conversationId: string }).conversationId,
  ]);
}

const deleteAttachments = (em: EntityManager, conversationId: string, ids: string[]) =>
  sql(
    em,
    `update conversations.attachments set deleted = true
      where conversation_id = ? and id in (select jsonb_array_elements_text(?::jsonb))`,
    [conversationId, JSON.stringify(ids)],
  );

/** Recomputes the write state from the event store (after a restore, or to check it). */
export async function rebuildWriteState(em: EntityManager, store: EventStore): Promise<number> {
  await sql(em, 'truncate conversations.conversations, conversations.attachments, conversations.messages');
  const rows = await sql<{ stream_id: string }>(
    em,
    `select distinct stream_id from "${store.schema}".events order by stream_id`,
  );
  let count = 0;
  for (const { stream_id: streamId } of rows) {
    for (const event of await store.readStream(em, streamId)) {
      await applyToWriteState(em, event);
      count += 1;
    }
  }
  return count;
}

interface ConversationRow {
  id: string;
  account_a: string;
  gofer_a: string;
  account_b: string;
  gofer_b: string;
  status: 'open' | 'closed';
  version: number;
  last_change_sequence: string;
}

export interface LoadedConversation {
  conversation: Conversation;
  version: number;
}

/** The conversation's row, locked for the transaction when `lock` (every command takes it). */
export async function loadConversation(
  em: EntityManager,
  conversationId: string,
  lock: boolean,
): Promise<LoadedConversation | null> {
  const [r] = await sql<ConversationRow>(
    em,
    `select id, account_a, gofer_a, account_b, gofer_b, status, version, last_change_sequence
       from conversations.conversations where id = ?${lock ? ' for update' : ''}`,
    [conversationId],
  );
  if (!r) return null;
  return {
    version: r.version,
    conversation: {
      id: r.id,
      accountA: r.account_a,
      goferA: r.gofer_a,
      accountB: r.account_b,
      goferB: r.gofer_b,
      status: r.status,
      lastChangeSequence: Number(r.last_change_sequence),
    },
  };
}

interface AttachmentRow {
  id: string;
  uploader_account_id: string;
  kind: 'photo' | 'document';
  name: string;
  mime_type: string;
  size: string;
  width: number | null;
  height: number | null;
  storage_key: string;
  message_id: string | null;
  deleted: boolean;
}

export type LoadedAttachment = StoredAttachment & { storageKey: string };

/** The given attachments of one conversation (ids of other conversations are simply not found). */
export async function loadAttachments(
  em: EntityManager,
  conversationId: string,
  ids: string[],
): Promise<LoadedAttachment[]> {
  if (ids.length === 0) return [];
  const rows = await sql<AttachmentRow>(
    em,
    `select id, uploader_account_id, kind, name, mime_type, size, width, height, storage_key, message_id, deleted
       from conversations.attachments
      where conversation_id = ? and id in (select jsonb_array_elements_text(?::jsonb))`,
    [conversationId, JSON.stringify(ids)],
  );
  return rows.map((r) => ({
    attachmentId: r.id,
    uploaderAccountId: r.uploader_account_id,
    kind: r.kind,
    name: r.name,
    mimeType: r.mime_type,
    size: Number(r.size),
    width: r.width,
    height: r.height,
    storageKey: r.storage_key,
    messageId: r.message_id,
    deleted: r.deleted,
  }));
}

/** The ids and storage keys of every attachment of the conversation still stored. */
export async function liveAttachments(
  em: EntityManager,
  conversationId: string,
): Promise<{ id: string; storage_key: string }[]> {
  return sql(
    em,
    'select id, storage_key from conversations.attachments where conversation_id = ? and not deleted order by id',
    [conversationId],
  );
}

export async function loadMessage(
  em: EntityManager,
  conversationId: string,
  messageId: string,
): Promise<StoredMessage | null> {
  const [r] = await sql<{
    id: string;
    sender_account_id: string;
    change_sequence: string;
    recalled: boolean;
    attachment_ids: string[];
  }>(
    em,
    `select id, sender_account_id, change_sequence, recalled, attachment_ids
       from conversations.messages where conversation_id = ? and id = ?`,
    [conversationId, messageId],
  );
  if (!r) return null;
  return {
    id: r.id,
    senderAccountId: r.sender_account_id,
    changeSequence: Number(r.change_sequence),
    recalled: r.recalled,
    attachmentIds: r.attachment_ids,
  };
}
