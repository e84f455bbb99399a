import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { HttpError, multipartFileBody, readFilePart, registerUploadScope, validation } from '@oan/http';
import { ErrorCodes } from '@oan/protocol';
import {
  contentMatches,
  declaredMime,
  isDocumentMime,
  isPhotoMime,
  photoDimensions,
  sanitizeFileName,
  type ObjectStorage,
} from '@oan/storage';
import { goferStreamId } from '@oan/domain';
import { assertOwnsActiveGofer, goferCommands, type GoferContext } from '../commands/context.ts';
import type { NewAttachment } from '../domain/attachments.ts';
import { rethrowMapped } from './errors.ts';

export interface UploadRouteDeps {
  ctx: GoferContext;
  authenticator: Authenticator;
  storage: ObjectStorage;
  /** Lifetime of the document download URL in the upload answer (the protocol's limit: ≈ 1 h). */
  urlTtlSeconds?: number;
}

const params = z.object({ goferId: z.string() });
const uploadSchema = <R extends z.ZodType>(response: R) => ({
  params,
  consumes: ['multipart/form-data'],
  body: multipartFileBody,
  response: { 201: response },
});
const documentResponse = z.object({
  attachment: z.object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    mimeType: z.string(),
    size: z.number(),
    ragStatus: z.enum(['processing', 'unsupported']),
  }),
  ragStatus: z.enum(['processing', 'unsupported']),
});
const photoResponse = z.object({
  photo: z.object({
    id: z.string(),
    name: z.string(),
    mimeType: z.string(),
    size: z.number(),
    width: z.number().nullable(),
    height: z.number().nullable(),
    source: z.literal('chat'),
  }),
});

/** The photo upload's contract: exactly this body (with the recommended code) for any photo that is not one. */
const unsupportedMime = () => new HttpError(415, ErrorCodes.unsupportedMime, 'UNSUPPORTED_MIME');
const DOCUMENT_TYPES = 'PDF, Word (.doc, .docx), plain text (.txt) or CSV';

/**
 * Document and photo uploads under `/api/v1`, registered only when an object-storage adapter is
 * configured. Order: credential, then the Gofer (probe-safe 403 before a byte is read), then the file
 * (size while streaming, declared type, then the bytes), then storage, then the event.
 */
export const uploadRoutes: FastifyPluginAsyncZod<UploadRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  await registerUploadScope(app);
  const { ctx, storage } = deps;
  const ttl = deps.urlTtlSeconds ?? 3600;
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm', permission: 'role:update' });

  /** Stores the bytes, then records them; the object is removed again if the record fails. */
  async function store(input: Omit<NewAttachment, 'storageKey'>, bytes: Buffer, signUrl: boolean) {
    const storageKey = `${input.goferId}/${input.attachmentId}`;
    await storage.put(storageKey, bytes, {
      contentType: input.mimeType,
      size: bytes.length,
      fileName: input.name,
    });
    try {
      const signed = signUrl
        ? await storage.signedUrl(storageKey, {
            expiresInSeconds: ttl,
            fileName: input.name,
            contentType: input.mimeType,
          })
        : null;
      const data = { ...input, storageKey };
      await goferCommands(ctx)(goferStreamId(input.goferId), { type: 'AddAttachment', data });
      return signed;
    } catch (err) {
      await storage
        .delete(storageKey)
        .catch((e: unknown) => app.log.warn({ err: e }, 'could not remove an orphan upload'));
      throw err;
    }
  }

  // (16)
  app.post(
    '/gofers/:goferId/attachments',
    {
      onRequest: auth,
      schema: uploadSchema(documentResponse),
    },
    async (req, reply) => {
      const { accountId } = principalOf(req);
      const { goferId } = req.params;
      await assertOwnsActiveGofer(ctx, accountId, goferId);
      const file = await readUpload(req);
      const mimeType = declaredMime(file.partType, file.name);
      if (!isDocumentMime(mimeType))
        throw validation(`Unsupported file type: documents must be ${DOCUMENT_TYPES}`);
      if (!(await contentMatches(mimeType, file.bytes))) {
        throw validation(`The file content is not a valid ${mimeType} document`);
      }
      // Text is parsed into knowledge in the background (reactors/rag.ts); the rest is kept as is.
      const ragStatus = mimeType === 'text/plain' || mimeType === 'text/csv' ? 'processing' : 'unsupported';
      const id = ctx.ids();
      const size = file.bytes.length;
      const common = { goferId, accountId, attachmentId: id, name: file.name, mimeType, size };
      const signed = await store(
        { ...common, kind: 'document', width: null, height: null, ragStatus },
        file.bytes,
        true,
      );
      return reply.status(201).send({
        attachment: { id, name: file.name, url: signed!.url, mimeType, size, ragStatus },
        ragStatus,
      });
    },
  );

  // (17)
  app.post(
    '/gofers/:goferId/photos',
    {
      onRequest: auth,
      schema: uploadSchema(photoResponse),
    },
    async (req, reply) => {
      const { accountId } = principalOf(req);
      const { goferId } = req.params;
      await assertOwnsActiveGofer(ctx, accountId, goferId);
      const file = await readUpload(req);
      const mimeType = declaredMime(file.partType, file.name);
      if (!isPhotoMime(mimeType) || !(await contentMatches(mimeType, file.bytes))) throw unsupportedMime();
      const { width, height } = photoDimensions(file.bytes);
      const id = ctx.ids();
      const size = file.bytes.length;
      // No image analysis in v1: nothing to wait for, so the photo is `ready` at once.
      const input = {
        goferId,
        accountId,
        attachmentId: id,
        kind: 'photo' as const,
        name: file.name,
        mimeType,
        size,
      };
      await store({ ...input, width, height, ragStatus: 'ready' }, file.bytes, false);
      return reply
        .status(201)
        .send({ photo: { id, name: file.name, mimeType, size, width, height, source: 'chat' } });
    },
  );
};

/** The `file` part with its name made safe to store and echo. */
async function readUpload(req: Parameters<typeof readFilePart>[0]) {
  const part = await readFilePart(req);
  return { name: sanitizeFileName(part.fileName), partType: part.partType, bytes: part.bytes };
}
