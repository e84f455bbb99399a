/* eslint-disable max-lines -- Longer than most modules on purpose: the conversations write side's
 * migrations, its snapshot rows and the message/attachment indexes are saved in the append's
 * transaction, and keeping them in one file keeps each column beside the statement that writes it.
 */
import { isoUtc, Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import { commandIdsMigration, EventStore, type Snapshot, type StoredEvent } from '@oan/eventstore';
import { avroEventValidator, SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import {
  evolveConversation,
  indexChangesOf,
  initialConversationState,
  type Conversation,
  type ConversationState,
  type IndexChange,
  type StoredAttachment,
  type StoredMessage,
  type StoredRevision,
} from '../domain/conversationState.ts';
import type { ConversationEvent, ConversationMessageSent } from '@oan/domain';
import { deviceKeysMigration, rebuildDeviceKeys } from './deviceKeys.ts';

/** The conversations event store (`conversations.events`, `conversations.outbox`), Avro-checked. */
export const createConversationStore = () =>
  new EventStore('conversations', avroEventValidator(new SchemaRegistry(SCHEMAS_DIR)));

/**
 * The write side's state of each conversation, kept in the same transaction as every append, so a
 * command loads one row and the few it needs instead of folding the whole stream. The conversation row
 * is the snapshot (`evolveConversation`'s state): `version` is the stream's version (the optimistic
 * check of the append), the row is the lock that serializes commands, `last_change_sequence` the dense
 * counter (decided on the write side). `messages` and `attachments` are the index of per-message and
 * per-attachment facts (`indexChangesOf`). All of it is derived from the events alone:
 * `rebuildWriteState` recomputes it.
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

/**
 * Revisions (docs/sealed-messages.md): each message's time (the 24-hour window), its corrections so
 * far and whether it is sealed, and each revision as a retry under its clientMessageId answers it.
 * Rows of messages sent before take their time from their event.
 */
class AddRevisions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table conversations.messages
      add column if not exists created_at timestamptz,
      add column if not exists corrections integer not null default 0,
      add column if not exists sealed boolean not null default false`);
    this.addSql(`update conversations.messages m set created_at = (e.data->>'createdAt')::timestamptz
      from conversations.events e
      where m.created_at is null and e.type = 'ConversationMessageSent' and e.data->>'messageId' = m.id`);
    this.addSql(`create table if not exists conversations.revisions (
      id text primary key, conversation_id text not null, message_id text not null,
      sender_account_id text not null, client_message_id text, action text not null,
      content text not null, sealed jsonb, count integer not null, at timestamptz not null,
      unique (conversation_id, sender_account_id, client_message_id))`);
    this.addSql('create index if not exists revisions_message on conversations.revisions (message_id)');
  }
}

/**
 * A send's `clientMessageId` (docs/sealed-messages.md) and the event that stored the message: a send
 * that repeats one finds the first by (conversation, sender, clientMessageId) under the
 * conversation's lock and answers that event's message again.
 */
class AddClientMessageIds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table conversations.messages
      add column if not exists client_message_id text, add column if not exists event_id uuid`);
    this.addSql(`create unique index if not exists messages_client_message_id
      on conversations.messages (conversation_id, sender_account_id, client_message_id)
      where client_message_id is not null`);
  }
}

export const conversationMigrations = (store: EventStore): MigrationDef[] => [
  store.migration(),
  commandIdsMigration(store),
  { name: 'conversations-0001-write-state', class: CreateWriteState },
  deviceKeysMigration,
  { name: 'conversations-0003-client-message-ids', class: AddClientMessageIds },
  { name: 'conversations-0004-revisions', class: AddRevisions },
];

/**
 * The conversation's snapshot row (`conversations.conversations`) as the command handler loads and
 * saves it: read under a row lock, which queues the commands of one conversation, and written back
 * evolved in the append's transaction together with the index rows of the appended events
 * (libs/eventstore `Snapshot`, ADR 0013).
 */
export const conversationSnapshot = (conversationId: string): Snapshot<ConversationState> => ({
  load: (em) => loadConversation(em, conversationId, { lock: true }),
  save: (em, state, version, appended) => writeState(em, appended, { state, version }),
});

/** One SQL statement's text and its parameters. */
interface Statement {
  text: string;
  params: unknown[];
}

/**
 * Writes the index changes of `stored` (`indexChangesOf`) and, with the last event, the snapshot:
 * one statement per event, its writes as data-modifying CTEs (a send is one statement while the row
 * is locked). The changes of one event touch different rows, so running them on one
 * snapshot of the database is the same as running them in turn.
 */
async function writeState(
  em: EntityManager,
  stored: readonly StoredEvent[],
  snapshot: { state: ConversationState; version: number },
): Promise<void> {
  for (const [i, event] of stored.entries()) {
    const writes = indexChangesOf({ type: event.type, data: event.data } as ConversationEvent)
      .map((change) => indexWrite(change, event.eventId))
      .filter((w): w is Statement => w !== null);
    if (i === stored.length - 1) writes.push(snapshotWrite(snapshot.state, snapshot.version));
    const last = writes.pop();
    if (!last) continue;
    const text = writes.length
      ? `with ${writes.map((w, n) => `w${n} as (${w.text})`).join(', ')} ${last.text}`
      : last.text;
    await sql(em, text, [...writes.flatMap((w) => w.params), ...last.params]);
  }
}

function snapshotWrite(state: ConversationState, version: number): Statement {
  if (state.status === 'none') throw new Error('A conversation is saved only once it is opened');
  return {
    text: `insert into conversations.conversations
       (id, match_id, thread_id, account_a, gofer_a, account_b, gofer_b, status, version, last_change_sequence)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (id) do update set status = excluded.status, version = excluded.version,
       last_change_sequence = excluded.last_change_sequence`,
    params: [
      state.id,
      state.matchId,
      state.threadId,
      state.accountA,
      state.goferA,
      state.accountB,
      state.goferB,
      state.status,
      version,
      state.lastChangeSequence,
    ],
  };
}

/**
 * One index change as SQL (of the event `eventId`); idempotent, so a rebuild can replay everything.
 * Null: nothing to write.
 */
function indexWrite(change: IndexChange, eventId: string): Statement | null {
  switch (change.type) {
    case 'attachment_stored': {
      const a = change.attachment;
      return {
        text: `insert into conversations.attachments (id, conversation_id, uploader_account_id, kind, name,
           mime_type, size, width, height, storage_key) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (id) do nothing`,
        params: [
          a.attachmentId,
          change.conversationId,
          a.uploaderAccountId,
          a.kind,
          a.name,
          a.mimeType,
          a.size,
          a.width,
          a.height,
          a.storageKey,
        ],
      };
    }
    case 'message_stored': {
      const m = change.message;
      return {
        text: `insert into conversations.messages (id, conversation_id, sender_account_id, change_sequence,
           attachment_ids, created_at, sealed, client_message_id, event_id)
         values (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?) on conflict (id) do nothing`,
        params: [
          m.id,
          change.conversationId,
          m.senderAccountId,
          m.changeSequence,
          JSON.stringify(m.attachmentIds),
          m.createdAt,
          m.sealed,
          change.clientMessageId,
          eventId,
        ],
      };
    }
    case 'message_corrected':
      return {
        text: 'update conversations.messages set corrections = greatest(corrections, ?) where id = ?',
        params: [change.corrections, change.messageId],
      };
    case 'revision_stored': {
      const r = change.revision;
      return {
        text: `insert into conversations.revisions (id, conversation_id, message_id, sender_account_id,
           client_message_id, action, content, sealed, count, at) values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?)
         on conflict (id) do nothing`,
        params: [
          r.id,
          change.conversationId,
          r.messageId,
          r.senderAccountId,
          r.clientMessageId,
          r.action,
          r.content,
          r.sealed === null ? null : JSON.stringify(r.sealed),
          r.count,
          r.at,
        ],
      };
    }
    case 'revisions_stripped':
      return {
        text: `update conversations.revisions set content = '', sealed = null where message_id = ?`,
        params: [change.messageId],
      };
    case 'attachments_used':
      return {
        text: `update conversations.attachments set message_id = ?
          where conversation_id = ? and id in (select jsonb_array_elements_text(?::jsonb))`,
        params: [change.messageId, change.conversationId, JSON.stringify(change.attachmentIds)],
      };
    case 'message_recalled':
      return {
        text: 'update conversations.messages set recalled = true where id = ?',
        params: [change.messageId],
      };
    case 'attachments_deleted':
      if (change.attachmentIds.length === 0) return null;
      return {
        text: `update conversations.attachments set deleted = true
          where conversation_id = ? and id in (select jsonb_array_elements_text(?::jsonb))`,
        params: [change.conversationId, JSON.stringify(change.attachmentIds)],
      };
    default: {
      const unexpected: never = change;
      throw new Error(`Unknown index change ${(unexpected as { type: string }).type}`);
    }
  }
}

interface ConversationRow {
  id: string;
  match_id: string;
  thread_id: string;
  account_a: string;
  gofer_a: string;
  account_b: string;
  gofer_b: string;
  status: 'open' | 'closed';
  version: number;
  last_change_sequence: string;
}

/** The conversation's snapshot and the stream version it stands for; locked for the transaction with `lock`. */
export async function loadConversation(
  em: EntityManager,
  conversationId: string,
  opts: { lock: boolean },
): Promise<{ state: Conversation; version: number } | null> {
  const [r] = await sql<ConversationRow>(
    em,
    `select id, match_id, thread_id, account_a, gofer_a, account_b, gofer_b, status, version, last_change_sequence
       from conversations.conversations where id = ?${opts.lock ? ' for update' : ''}`,
    [conversationId],
  );
  if (!r) return null;
  return {
    version: r.version,
    state: {
      status: r.status,
      id: r.id,
      matchId: r.match_id,
      threadId: r.thread_id,
      accountA: r.account_a,
      goferA: r.gofer_a,
      accountB: r.account_b,
      goferB: r.gofer_b,
      lastChangeSequence: Number(r.last_change_sequence),
    },
  };
}

/** The ids of a Gofer's open conversations. */
export async function openConversationsOf(em: EntityManager, goferId: string): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select id from conversations.conversations where (gofer_a = ? or gofer_b = ?) and status = 'open'`,
    [goferId, goferId],
  );
  return rows.map((r) => r.id);
}

/**
 * Recomputes the write state from the event store (after a restore, or to check it): each
 * conversation's snapshot folded with `evolveConversation`, its index from `indexChangesOf`, and the
 * key directory (`rebuildDeviceKeys`).
 */
export async function rebuildWriteState(em: EntityManager, store: EventStore): Promise<number> {
  await sql(em, 'truncate conversations.conversations, conversations.attachments, conversations.messages');
  const streams = async (prefix: string) =>
    (
      await sql<{ stream_id: string }>(
        em,
        `select distinct stream_id from "${store.schema}".events where starts_with(stream_id, ?) order by stream_id`,
        [prefix],
      )
    ).map((r) => r.stream_id);
  let count = await rebuildDeviceKeys(em, store, await streams('devicekeys-'));
  for (const streamId of await streams('conversation-')) {
    const stored = await store.readStream(em, streamId);
    const last = stored.at(-1);
    if (!last) continue;
    const state = stored
      .map((e) => ({ type: e.type, data: e.data }) as ConversationEvent)
      .reduce(evolveConversation, initialConversationState());
    await writeState(em, stored, { state, version: last.streamVersion });
    count += stored.length;
  }
  return count;
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
    created_at: string;
    corrections: number;
    sealed: boolean;
  }>(
    em,
    `select id, sender_account_id, change_sequence, recalled, attachment_ids,
            ${isoUtc('created_at')} as created_at, corrections, sealed
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
    createdAt: r.created_at,
    corrections: r.corrections,
    sealed: r.sealed,
  };
}

/** The caller's revision in this conversation under `clientMessageId`, if any (a retry, or a reuse). */
export async function loadRevision(
  em: EntityManager,
  conversationId: string,
  senderAccountId: string,
  clientMessageId: string,
): Promise<StoredRevision | null> {
  const [r] = await sql<{
    id: string;
    message_id: string;
    action: 'correct' | 'retract';
    content: string;
    sealed: StoredRevision['sealed'];
    count: number;
    at: string;
  }>(
    em,
    `select id, message_id, action, content, sealed, count, ${isoUtc('at')} as at from conversations.revisions
      where conversation_id = ? and sender_account_id = ? and client_message_id = ?`,
    [conversationId, senderAccountId, clientMessageId],
  );
  if (!r) return null;
  return {
    id: r.id,
    messageId: r.message_id,
    senderAccountId,
    clientMessageId,
    action: r.action,
    content: r.content,
    sealed: r.sealed,
    count: r.count,
    at: r.at,
  };
}

/** Which of `attachmentIds` another message of the conversation, not withdrawn, names too. */
export async function attachmentsUsedElsewhere(
  em: EntityManager,
  conversationId: string,
  messageId: string,
  attachmentIds: string[],
): Promise<string[]> {
  if (attachmentIds.length === 0) return [];
  const rows = await sql<{ id: string }>(
    em,
    `select distinct x.id from conversations.messages m, jsonb_array_elements_text(m.attachment_ids) as x(id)
      where m.conversation_id = ? and m.id <> ? and not m.recalled
        and x.id in (select jsonb_array_elements_text(?::jsonb))`,
    [conversationId, messageId, JSON.stringify(attachmentIds)],
  );
  return rows.map((r) => r.id);
}

/**
 * The message the sender sent in this conversation under `clientMessageId`, as its event says
 * (null when there is none). Read in the send's transaction, under the conversation's lock.
 */
export async function messageByClientId(
  em: EntityManager,
  store: EventStore,
  conversationId: string,
  senderAccountId: string,
  clientMessageId: string,
): Promise<ConversationMessageSent | null> {
  const [row] = await sql<{ event_id: string }>(
    em,
    `select event_id from conversations.messages
      where conversation_id = ? and sender_account_id = ? and client_message_id = ?`,
    [conversationId, senderAccountId, clientMessageId],
  );
  if (!row) return null;
  const [event] = await store.readEvents<ConversationMessageSent>(em, [row.event_id]);
  return event?.data ?? null;
}
