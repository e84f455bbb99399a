import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth } from '@oan/auth';
import { reviseMessage, type RevisedMessage } from '../commands/revisions.ts';
import { MAX_CORRECTIONS } from '../domain/revisions.ts';
import { rethrowMapped } from './errors.ts';
import { deleteFiles } from './files.ts';
import type { ConversationRouteDeps } from './messages.ts';
import * as s from './schemas.ts';
import { toOanAttachment } from './shapes.ts';

/** The revise route's answer: the message as history shows it, with its `revision`. */
export const toRevisedMessage = (r: RevisedMessage): s.ConversationMessage => ({
  id: r.message.id,
  senderUserId: r.message.senderAccountId,
  content: r.content,
  ...(r.sealed === null ? {} : { sealed: r.sealed }),
  attachments: r.attachments.map(toOanAttachment),
  changeSequence: String(r.message.changeSequence),
  createdAt: r.message.createdAt,
  revision: r.revision,
});

/** Corrections and retractions (docs/sealed-messages.md "Revisions", ADR 0037), under `/api/v1`. */
export const revisionRoutes: FastifyPluginAsyncZod<ConversationRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx, storage } = deps;

  app.post(
    '/conversations/:conversationId/messages/:messageId/revise',
    {
      onRequest: requireAuth(deps.authenticator, { mode: 'multi+realm', permission: 'message:send' }),
      schema: {
        tags: ['extension'],
        summary: 'Correct or retract a message (extension to protocol v1)',
        description:
          'Extension to protocol v1 (docs/sealed-messages.md, ADR 0037): the sender corrects its message ' +
          '(`content` for a plain message, `sealed` for a sealed one) or retracts it, within 24 hours of its ' +
          `createdAt, at most ${MAX_CORRECTIONS} corrections. The message keeps its id and changeSequence; the ` +
          'other side gets a relay_message with `revision`. A retraction empties the message, takes it out of ' +
          'both histories and deletes its attachments. The same clientMessageId and body answer the same 200 ' +
          'again. Refusals: 403 MESSAGE_NOT_YOURS, 404 MESSAGE_NOT_FOUND, 409 REVISION_WINDOW_CLOSED, ' +
          '409 REVISION_LIMIT, 409 CLIENT_MESSAGE_ID_REUSED, 400 VALIDATION_ERROR.',
        params: s.messageParams,
        body: s.reviseBody,
        response: { 200: s.message },
      },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { conversationId, messageId } = req.params;
      const { answer, storageKeys } = await reviseMessage(
        ctx,
        conversationId,
        accountId,
        messageId,
        req.body,
      );
      await deleteFiles(storage, storageKeys, req.log);
      return toRevisedMessage(answer);
    },
  );
};
