import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { goferFileOf } from '@oan/readmodels';
import type { ObjectStorage } from '@oan/storage';
import { loadThread, plausibleId, type MatchingContext } from '../commands/context.ts';
import { NotFoundError } from '../domain/errors.ts';
import { rethrowMapped } from './errors.ts';
import * as s from './schemas.ts';
import { assertCallerIn } from './threads.ts';

export interface CounterpartAttachmentRouteDeps {
  ctx: MatchingContext;
  authenticator: Authenticator;
  /** The gofers service's object storage (signing only); null (no adapter) ⇒ every attachment is 404. */
  storage: Pick<ObjectStorage, 'signedUrl'> | null;
}

/** Signed URLs are self-authorizing, so short-lived, like the URL in an upload's response. */
export const COUNTERPART_URL_TTL_SECONDS = 3600;

const attachmentNotFound = () => new NotFoundError('ATTACHMENT_NOT_FOUND', 'Attachment not found');

/**
 * `GET /threads/:threadId/counterpart-attachments/:attachmentId/url` under `/api/v1`: a signed
 * download URL for an attachment (photo or document) of the **other** side's Gofer, not tied to any
 * message. Thread unknown ⇒ 404, caller not in it ⇒ 403 (the threads group's frozen convention,
 * read from the thread's stream); then an attachment unknown, deleted or not the counterpart's ⇒
 * one final 404 (read from `read.gofer_attachments`).
 */
export const counterpartAttachmentRoutes: FastifyPluginAsyncZod<CounterpartAttachmentRouteDeps> = async (
  app,
  deps,
) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx, storage } = deps;

  app.get(
    '/threads/:threadId/counterpart-attachments/:attachmentId/url',
    {
      onRequest: requireAuth(deps.authenticator, { mode: 'multi-open', permission: 'thread:read' }),
      schema: { params: s.counterpartAttachmentParams, response: { 200: s.signedUrlResponse } },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { threadId, attachmentId } = req.params;
      const { state } = await loadThread(ctx, threadId);
      assertCallerIn(state, accountId);
      if (!storage || !plausibleId(attachmentId)) throw attachmentNotFound();
      // The side(s) facing the caller's Gofer: both when one account owns both Gofers.
      const counterparts = [
        ...(state.a.accountId === accountId ? [state.b.goferId] : []),
        ...(state.b.accountId === accountId ? [state.a.goferId] : []),
      ];
      const row = await goferFileOf(ctx.orm.em.fork(), attachmentId, counterparts);
      if (!row) throw attachmentNotFound();
      const { url, expiresAt } = await storage.signedUrl(row.storageKey, {
        expiresInSeconds: COUNTERPART_URL_TTL_SECONDS,
        fileName: row.name,
        contentType: row.mimeType,
      });
      return { url, expiresAt };
    },
  );
};
