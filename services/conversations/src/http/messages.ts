import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { commandIdOf, principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { noContent } from '@oan/http';
import { awaitOwnWrites } from '@oan/projection';
import { conversationHistoryPage, type ConversationMessageRow } from '@oan/readmodels';
import type { ObjectStorage } from '@oan/storage';
import { assertParticipates, WRITE_SOURCE, type ConversationContext } from '../commands/context.ts';
import { recallMessage, sendMessage } from '../commands/messages.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';
import { sealedOf, toOanAttachment } from './shapes.ts';

export interface ConversationRouteDeps {
  ctx: ConversationContext;
  authenticator: Authenticator;
  /** null ⇒ no uploads: attachment routes absent, every attachmentId unusable. */
  storage: ObjectStorage | null;
}

const toMessage = (r: ConversationMessageRow): s.ConversationMessage => ({
  id: r.id,
  senderUserId: r.senderAccountId,
  content: r.content,
  attachments: (r.attachments ?? []).map(toOanAttachment),
  changeSequence: r.changeSequence,
  createdAt: r.createdAt,
  ...sealedOf(r.sealed),
});

/** History, sending and the recall extension, under `/api/v1`. */
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
      const rows = await conversationHistoryPage(
        ctx.orm.em.fork(),
        conversationId,
        req.query.since,
        req.query.limit,
      );
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
      const sent = await sendMessage(
        ctx,
        req.params.conversationId,
        { accountId, ...req.body },
        commandIdOf(req),
      );
      return reply.status(201).send({
        id: sent.messageId,
        senderUserId: sent.senderAccountId,
        content: sent.content,
        attachments: sent.attachments.map(toOanAttachment),
        changeSequence: String(sent.changeSequence),
        createdAt: sent.createdAt,
        ...sealedOf(sent.sealed),
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
