import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { commandIdOf, principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { noContent } from '@oan/http';
import { awaitOwnWrites } from '@oan/projection';
import { conversationHistoryPage, type ConversationMessageRow } from '@oan/readmodels';
import type { ObjectStorage } from '@oan/storage';
import { assertParticipates, WRITE_SOURCE, type ConversationContext } from '../commands/context.ts';
import { sendMessage } from '../commands/messages.ts';
import { reviseMessage } from '../commands/revisions.ts';
import { rethrowMapped, rethrowMappedForRecall } from './errors.ts';
import { deleteFiles } from './files.ts';
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
  ...(r.sealed === null ? {} : { sealed: r.sealed }),
  attachments: (r.attachments ?? []).map(toOanAttachment),
  changeSequence: r.changeSequence,
  createdAt: r.createdAt,
  ...sealedOf(r.sealed),
  // Only a revised message has the key: an unrevised one reads as in protocol v1.
  ...(r.revision === null ? {} : { revision: r.revision }),
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
      // Only the known fields reach the command: a v1 body's extra fields are ignored, as they were.
      const { content, sealed, attachmentIds, clientMessageId, allowMissing } = req.body;
      const sent = await sendMessage(
        ctx,
        req.params.conversationId,
        { accountId, content, sealed, attachmentIds, clientMessageId, allowMissing },
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

  // Extension (documented in the OpenAPI document): the sender withdraws its own message, which is
  // the revise route's retraction without a clientMessageId (ADR 0037).
  app.delete(
    '/conversations/:conversationId/messages/:messageId',
    {
      onRequest: auth('message:send'),
      schema: {
        tags: ['extension'],
        summary: 'Recall a message (extension to protocol v1)',
        description:
          'Extension to protocol v1: the sender recalls its own message, the same retraction as ' +
          '`POST …/messages/{messageId}/revise` with `action: "retract"` (docs/sealed-messages.md). It ' +
          'disappears from both histories, its attachments are deleted (their URLs answer 404), and the ' +
          'other side gets a `relay_message` saying it was withdrawn. Within 24 hours of its createdAt ' +
          '(else 409 REVISION_WINDOW_CLOSED).',
        params: s.messageParams,
        response: { 204: noContent },
      },
    },
    async (req, reply) => {
      const accountId = principalOf(req).accountId;
      const { conversationId, messageId } = req.params;
      const retract = { action: 'retract' as const, clientMessageId: null };
      const { storageKeys } = await reviseMessage(ctx, conversationId, accountId, messageId, retract).catch(
        rethrowMappedForRecall,
      );
      await deleteFiles(storage, storageKeys, req.log);
      return reply.status(204).send(null);
    },
  );
};
