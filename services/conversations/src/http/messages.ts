import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { sql, type EntityManager } from '@oan/db';
import { noContent } from '@oan/http';
import { awaitOwnWrites } from '@oan/projection';
import type { ObjectStorage } from '@oan/storage';
import { assertParticipates, WRITE_SOURCE, type ConversationContext } from '../commands/context';
import { recallMessage, sendMessage } from '../commands/messages';
import type { MessageAttachment } from '@oan/domain';
import { rethrowMapped } from './errors';
import * as s from './schemas';
import { toOanAttachment } from './shapes';

export interface ConversationRouteDeps {
  ctx: ConversationContext;
  authenticator: Authenticator;
  /** null ⇒ no uploads (§0.5): attachment routes absent, every attachmentId unusable. */
  storage: ObjectStorage | null;
}

/** Largest value of a Postgres bigint: a `since` past it can match nothing. */
const PG_BIGINT_MAX = 9223372036854775807n;

interface MessageRow {
  id: string;
  sender_account_id: string;
  content: string;
  change_sequence: string;
  created_at: string;
  attachments: MessageAttachment[] | null;
}

// Attachments resolved from the ids in the message's order; deleted files drop out (§4.7).
const SELECT = `select m.id, m.sender_account_id, m.content, m.change_sequence,
    to_char(m.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
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
export async function historyPage(
  em: EntityManager,
  conversationId: string,
  since: bigint,
  limit: number,
): Promise<MessageRow[]> {
  if (since >= PG_BIGINT_MAX) return [];
  const rows = await sql<MessageRow>(
    em,
    `${SELECT} where m.conversation_id = ? and m.change_sequence > ? and m.recalled_at is null
      order by m.change_sequence limit ?`,
    [conversationId, since.toString(), limit],
  );
  const last = rows.at(-1);
  if (!last) return [];
  const present = await sql<{ change_sequence: string }>(
    em,
    `select change_sequence from read.conversation_messages
      where conversation_id = ? and change_sequence > ? and change_sequence <= ? order by change_sequence`,
    [conversationId, since.toString(), last.change_sequence],
  );
  let expected = since + 1n;
  for (const p of present) {
    if (BigInt(p.change_sequence) !== expected) break;
    expected += 1n;
  }
  // Every row below `expected` is contiguous from `since`: the page ends there.
  return rows.filter((r) => BigInt(r.change_sequence) < expected);
}

const toMessage = (r: MessageRow): s.ConversationMessage => ({
  id: r.id,
  senderUserId: r.sender_account_id,
  content: r.content,
  attachments: (r.attachments ?? []).map(toOanAttachment),
  changeSequence: r.change_sequence,
  createdAt: r.created_at,
});

/** §4.7 (27), (28) and the recall extension, under `/api/v1`. */
export const messageRoutes: FastifyPluginAsyncZod<ConversationRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx, storage } = deps;
  const auth = (permission: 'message:send' | 'message:read') =>
    requireAuth(deps.authenticator, { mode: 'multi+realm', permission });

  app.get(
    '/conversations/:conversationId/messages',
    {
      onRequest: auth('message:read'),
      schema: {
        params: s.conversationParams,
        querystring: s.historyQuery,
        response: { 200: s.message.array() },
      },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { conversationId } = req.params;
      await assertParticipates(ctx, conversationId, accountId);
      await awaitOwnWrites(ctx.orm, ctx.writes, accountId, [WRITE_SOURCE]);
      const rows = await historyPage(ctx.orm.em.fork(), conversationId, req.query.since, req.query.limit);
      return rows.map(toMessage);
    },
  );

  app.post(
    '/conversations/:conversationId/messages',
    {
      onRequest: auth('message:send'),
      schema: { params: s.conversationParams, body: s.messageBody, response: { 201: s.message } },
    },
    async (req, reply) => {
      const accountId = principalOf(req).accountId;
      const sent = await sendMessage(ctx, req.params.conversationId, { accountId, ...req.body });
      return reply.status(201).send({
        id: sent.messageId,
        senderUserId: sent.senderAccountId,
        content: sent.content,
        attachments: sent.attachments.map(toOanAttachment),
        changeSequence: String(sent.changeSequence),
        createdAt: sent.createdAt,
      });
    },
  );

  // Extension (documented in the OpenAPI document): the sender withdraws its own message.
  app.delete(
    '/conversations/:conversationId/messages/:messageId',
    {
      onRequest: auth('message:send'),
      schema: {
        tags: ['extension'],
        summary: 'Recall a message (extension to protocol v1)',
        description:
          'Extension to protocol v1: the sender recalls its own message. It disappears from both ' +
          'histories and its attachments are deleted (their URLs answer 404). No event is emitted.',
        params: s.messageParams,
        response: { 204: noContent },
      },
    },
    async (req, reply) => {
      const accountId = principalOf(req).accountId;
      const { conversationId, messageId } = req.params;
      const keys = await recallMessage(ctx, conversationId, accountId, messageId);
      for (const key of keys) {
        // Best effort: the files are already unreachable (the URL route answers 404).
        await storage?.delete(key).catch((err: unknown) => app.log.warn({ err }, 'could not delete a file'));
      }
      return reply.status(204).send(null);
    },
  );
};
