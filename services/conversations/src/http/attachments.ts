import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth } from '@oan/auth';
import { HttpError, multipartFileBody, readFilePart, registerUploadScope } from '@oan/http';
import { ErrorCodes } from '@oan/protocol';
import {
  contentMatches,
  declaredMime,
  isDocumentMime,
  isPhotoMime,
  photoDimensions,
  sanitizeFileName,
  type ObjectStorage,
  type UploadMime,
} from '@oan/storage';
import { assertParticipates, plausibleId } from '../commands/context.ts';
import { recordUpload } from '../commands/messages.ts';
import { NotFoundError } from '../domain/errors.ts';
import { loadAttachments } from '../infra/store.ts';
import { rethrowMapped } from './errors.ts';
import type { ConversationRouteDeps } from './messages.ts';
import * as s from './schemas.ts';
import { toOanAttachment } from './shapes.ts';

/** The conversation attachment URL lives 3600 s. */
export const ATTACHMENT_URL_TTL_SECONDS = 3600;

/** The union of the document and photo whitelists; anything else (or bytes that lie) is a 415. */
const unsupportedMime = () => new HttpError(415, ErrorCodes.unsupportedMime, 'UNSUPPORTED_MIME');
const isUploadMime = (m: string): m is UploadMime => isDocumentMime(m) || isPhotoMime(m);
const attachmentNotFound = () => new NotFoundError('ATTACHMENT_NOT_FOUND', 'Attachment not found');

/**
 * Upload and signed-URL routes under `/api/v1`, registered only with an object-storage adapter. Upload
 * order: credential, then the conversation (probe-safe 403 before a byte is read), then the file
 * (size while streaming, declared type, the bytes), then storage, then the event.
 */
export const attachmentRoutes: FastifyPluginAsyncZod<
  ConversationRouteDeps & { storage: ObjectStorage }
> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  await registerUploadScope(app);
  const { ctx, storage } = deps;
  const auth = (permission: 'message:send' | 'message:read') =>
    requireAuth(deps.authenticator, { mode: 'multi+realm', permission });

  app.post(
    '/conversations/:conversationId/attachments',
    {
      onRequest: auth('message:send'),
      schema: {
        params: s.conversationParams,
        querystring: s.uploadQuery,
        consumes: ['multipart/form-data'],
        body: multipartFileBody,
        response: { 201: s.uploadResponse },
      },
    },
    async (req, reply) => {
      const accountId = principalOf(req).accountId;
      const { conversationId } = req.params;
      const conv = await assertParticipates(ctx, conversationId, accountId);
      const part = await readFilePart(req);
      const name = sanitizeFileName(part.fileName);
      const mimeType = declaredMime(part.partType, name);
      if (!isUploadMime(mimeType) || !(await contentMatches(mimeType, part.bytes))) throw unsupportedMime();
      // `kind` from the query, else image/* is a photo; sizes only for photos.
      const kind = req.query.kind ?? (mimeType.startsWith('image/') ? 'photo' : 'document');
      const sniffed = kind === 'photo' && isPhotoMime(mimeType) ? photoDimensions(part.bytes) : null;
      // The sizes are one pair: the caller's when it gave both, else the image's own (never a mix,
      // e.g. a given width beside the sniffed height), else what the caller gave.
      const given = { width: req.query.width ?? null, height: req.query.height ?? null };
      const pair = given.width !== null && given.height !== null ? given : (sniffed ?? given);
      const width = kind === 'photo' ? pair.width : null;
      const height = kind === 'photo' ? pair.height : null;
      const attachmentId = ctx.ids();
      const storageKey = `conversations/${conv.id}/${attachmentId}`;
      const size = part.bytes.length;
      await storage.put(storageKey, part.bytes, { contentType: mimeType, size, fileName: name });
      const attachment = { attachmentId, kind, name, mimeType, size, width, height } as const;
      try {
        await recordUpload(ctx, conv.id, { ...attachment, accountId, storageKey });
      } catch (err) {
        await storage
          .delete(storageKey)
          .catch((e: unknown) => app.log.warn({ err: e }, 'could not remove an orphan upload'));
        throw err;
      }
      return reply.status(201).send({ attachment: toOanAttachment(attachment) });
    },
  );

  app.get(
    '/conversations/:conversationId/attachments/:attachmentId/url',
    {
      onRequest: auth('message:read'),
      schema: { params: s.attachmentParams, response: { 200: s.urlResponse } },
    },
    async (req) => {
      const accountId = principalOf(req).accountId;
      const { conversationId, attachmentId } = req.params;
      const conv = await assertParticipates(ctx, conversationId, accountId);
      if (!plausibleId(attachmentId)) throw attachmentNotFound();
      const [a] = await loadAttachments(ctx.orm.em.fork(), conv.id, [attachmentId]);
      // A file not sent yet is its uploader's alone.
      if (!a || a.deleted || (a.messageId === null && a.uploaderAccountId !== accountId)) {
        throw attachmentNotFound();
      }
      const { url } = await storage.signedUrl(a.storageKey, {
        expiresInSeconds: ATTACHMENT_URL_TTL_SECONDS,
        fileName: a.name,
        contentType: a.mimeType,
      });
      return { url };
    },
  );
};
