import { isoUtc, sql, type EntityManager } from '@oan/db';
import type { MessageAttachment, SealedContent } from '@oan/domain';

// Queries other code may run on the conversations tables (no service writes its own SQL against them).

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
  /** A sealed message's envelope (its `content` is ""); null for a plain one. */
  sealed: SealedContent | null;
  /** null for a message never revised (its history item has no `revision`). */
  revision: { state: 'corrected' | 'retracted'; count: number; at: string } | null;
}

// Attachments resolved from the ids in the message's order; deleted files drop out (no tombstones).
const MESSAGES = `select m.id, m.sender_account_id as "senderAccountId", m.content,
    m.change_sequence as "changeSequence",
    ${isoUtc('m.created_at')} as "createdAt", m.sealed,
    case when m.revision_state is null then null else jsonb_build_object('state', m.revision_state,
      'count', m.revision_count, 'at', ${isoUtc('m.revised_at')}) end as revision,
    (select jsonb_agg(jsonb_build_object('attachmentId', a.id, 'kind', a.kind, 'name', a.name,
                      'mimeType', a.mime_type, 'size', a.size, 'width', a.width, 'height', a.height)
                      order by x.ord)
       from jsonb_array_elements_text(m.attachment_ids) with ordinality as x(aid, ord)
       join read.conversation_attachments a on a.id = x.aid and a.deleted_at is null
    ) as attachments
  from read.conversation_messages m`;

/**
 * A conversation's history: a page after `since`, ascending. changeSequences are dense, but two
 * senders' messages reach the read model through two partitions, so a later one can be projected before
 * an earlier one: the page stops at the first changeSequence not projected yet (recalled rows stay in
 * the table and count), so a client advancing its cursor to the last item never skips a message.
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
