import { isoUtc, Migration, sql, type EntityManager, type MigrationDef } from '@oan/db';
import type { ConversationEvent, MessageAttachment } from '@oan/domain';
import { projection, type NotificationSpec, type StoredEvent } from './types.ts';

/**
 * The conversations context's read models (§4.7): the post-match channels, their uploads and their
 * messages, queried by the conversations service's GET routes.
 */
class CreateConversationsReadModels extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists read.conversations (
      id text primary key, match_id text not null, thread_id text not null,
      account_a text not null, gofer_a text not null, account_b text not null, gofer_b text not null,
      status text not null, closed_reason text, opened_at timestamptz not null, closed_at timestamptz)`);
    this.addSql('create index if not exists conversations_account_a on read.conversations (account_a)');
    this.addSql('create index if not exists conversations_account_b on read.conversations (account_b)');
    this.addSql(`create table if not exists read.conversation_attachments (
      id text primary key, conversation_id text not null, uploader_account_id text not null,
      kind text not null, name text not null, mime_type text not null, size bigint not null,
      width integer, height integer, storage_key text not null, message_id text,
      created_at timestamptz not null, deleted_at timestamptz)`);
    this.addSql(
      'create index if not exists conversation_attachments_conversation on read.conversation_attachments (conversation_id)',
    );
    this.addSql(`create table if not exists read.conversation_messages (
      id text primary key, conversation_id text not null, sender_account_id text not null,
      recipient_account_id text not null, content text not null, attachment_ids jsonb not null,
      change_sequence bigint not null, created_at timestamptz not null, recalled_at timestamptz,
      unique (conversation_id, change_sequence))`);
  }
}

/** This read model's tables, in migration order. */
export const conversationsTables: MigrationDef[] = [
  { name: 'read-0006-conversations', class: CreateConversationsReadModels },
];

type Event<T extends ConversationEvent['type']> = StoredEvent<Extract<ConversationEvent, { type: T }>>;
/** A nullable number as stored (an Avro long may decode as a bigint). */
const numOrNull = (v: number | bigint | null | undefined): number | null =>
  v === null || v === undefined ? null : Number(v);
/** Ids as a parameter: arrays go to Postgres as JSON text (`?::jsonb`). */
const IDS = '(select jsonb_array_elements_text(?::jsonb))';

/**
 * The conversations context's read models (§4.7): `read.conversations`, `read.conversation_attachments`
 * and `read.conversation_messages`; and its one notification, `relay_message` to the account that did
 * not write the message (§8.6). Events are keyed by the acting account, so one conversation's events
 * span partitions: only the per-sender order (upload → send → recall) is guaranteed, and every write
 * here either stands alone or is guarded to move forward only, so a redelivered event changes nothing.
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
  async ConversationMessageRecalled(em, { data: d }) {
    await sql(
      em,
      `update read.conversation_messages set recalled_at = ?
       where id = ? and conversation_id = ? and recalled_at is null`,
      [d.recalledAt, d.messageId, d.conversationId],
    );
    await deleteAttachments(em, d.conversationId, d.attachmentIds, d.recalledAt);
    return [];
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

/** `OanConversationAttachment` (§4.7): exactly these keys; width/height only when known. */
function wireAttachment(a: MessageAttachment): Record<string, unknown> {
  const width = numOrNull(a.width);
  const height = numOrNull(a.height);
  return {
    attachmentId: a.attachmentId,
    kind: a.kind,
    name: a.name,
    mimeType: a.mimeType,
    size: Number(a.size),
    ...(width === null ? {} : { width }),
    ...(height === null ? {} : { height }),
  };
}

async function messageSent(
  em: EntityManager,
  { data: d }: Event<'ConversationMessageSent'>,
): Promise<NotificationSpec[]> {
  const { conversationId, messageId, createdAt, attachments } = d;
  const sender = d.senderAccountId;
  const recipient = d.recipientAccountId;
  const attachmentIds = attachments.map((a) => a.attachmentId);
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
      d.content,
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
        content: d.content,
        createdAt,
        ...(attachments.length > 0 ? { attachments: attachments.map(wireAttachment) } : {}),
      },
      createdAt,
    },
  ];
}

// ---------------------------------------------------------------------------------------------------
// Queries other code may run on these tables (no service writes its own SQL against them).

/** Largest value of a Postgres bigint: a `since` past it can match nothing. */
const PG_BIGINT_MAX = 9223372036854775807n;

/** One message of a conversation with its live attachments, in the message's order. */
export interface ConversationMessageRow {
  id: string;
  senderAccountId: string;
  content: string;
  changeSequence: string;
  createdAt: string;
  attachments: MessageAttachment[] | null;
}

// Attachments resolved from the ids in the message's order; deleted files drop out (§4.7).
const MESSAGES = `select m.id, m.sender_account_id as "senderAccountId", m.content,
    m.change_sequence as "changeSequence",
    ${isoUtc('m.created_at')} as "createdAt",
    (select jsonb_agg(jsonb_build_object('attachmentId', a.id, 'kind', a.kind, 'name', a.name,
                      'mimeType', a.mime_type, 'size', a.size, 'width', a.width, 'height', a.height)
                      order by x.ord)
       from jsonb_array_elements_text(m.attachment_ids) with ordinality as x(aid, ord)
       join read.conversation_attachments a on a.id = x.aid and a.deleted_at is null
    ) as attachments
  from read.conversation_messages m`;

/**
 * §4.7 (27): a page after `since`, ascending. changeSequences are dense, but two senders' messages
 * reach the read model through two partitions, so a later one can be projected before an earlier
 * one: the page stops at the first changeSequence not projected yet (recalled rows stay in the table
 * and count), so a client advancing its cursor to the last item never skips a message.
 */
export async function conversationHistoryPage(
  em: EntityManager,
  conversationId: string,
  since: bigint,
  limit: number,
): Promise<ConversationMessageRow[]> {
  if (since >= PG_BIGINT_MAX) return [];
  const rows = await sql<ConversationMessageRow>(
    em,
    `${MESSAGES} where m.conversation_id = ? and m.change_sequence > ? and m.recalled_at is null
      order by m.change_sequence limit ?`,
    [conversationId, since.toString(), limit],
  );
  const last = rows.at(-1);
  if (!last) return [];
  const present = await sql<{ change_sequence: string }>(
    em,
    `select change_sequence from read.conversation_messages
      where conversation_id = ? and change_sequence > ? and change_sequence <= ? order by change_sequence`,
    [conversationId, since.toString(), last.changeSequence],
  );
  let expected = since + 1n;
  for (const p of present) {
    if (BigInt(p.change_sequence) !== expected) break;
    expected += 1n;
  }
  // Every row below `expected` is contiguous from `since`: the page ends there.
  return rows.filter((r) => BigInt(r.changeSequence) < expected);
}
