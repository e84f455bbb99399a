import type { FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { validatorCompiler, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { HttpError, validation } from '@oan/http';
import { ErrorCodes } from '@oan/protocol';
import { sanitizeFileName, type ObjectStorage } from '@oan/storage';
import { addAttachment, type NewAttachment } from '../commands/attachments';
import { assertOwnsActiveGofer, type GoferContext } from '../commands/context';
import { contentMatches, declaredMime, isDocumentMime, isPhotoMime, photoDimensions } from '../infra/sniff';
import { rethrowMapped } from './errors';

export interface UploadRouteDeps {
  ctx: GoferContext;
  authenticator: Authenticator;
  storage: ObjectStorage;
  /** Lifetime of the document download URL in the upload answer (§7: ≈ 1 h). */
  urlTtlSeconds?: number;
}

/** §7: 10 × 1024 × 1024 bytes per file, enforced while the part streams in. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

const params = z.object({ goferId: z.string() });
/** For the OpenAPI document only: the part is read from the stream, never validated as a body. */
const multipartBody = z.object({
  file: z.string().meta({ format: 'binary', description: 'the file; part content type = its MIME type' }),
});
const uploadSchema = <R extends z.ZodType>(response: R) => ({
  params,
  consumes: ['multipart/form-data'],
  body: multipartBody,
  response: { 201: response },
});
const skipBodyValidation: typeof validatorCompiler = (route) =>
  route.httpPart === 'body' ? () => ({ value: undefined }) : validatorCompiler(route);
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

const tooLarge = () =>
  new HttpError(413, ErrorCodes.payloadTooLarge, `File larger than ${MAX_UPLOAD_BYTES} bytes`);
/** §4.4 (17): exactly this body (with the recommended code) for any photo that is not one. */
const unsupportedMime = () => new HttpError(415, ErrorCodes.unsupportedMime, 'UNSUPPORTED_MIME');
const DOCUMENT_TYPES = 'PDF, Word (.doc, .docx), plain text (.txt) or CSV';

/**
 * §4.4 (16), (17) under `/api/v1`, registered only when an object-storage adapter is configured
 * (§0.5). Order: credential, then the Gofer (probe-safe 403 before a byte is read), then the file
 * (size while streaming, declared type, then the bytes), then storage, then the event.
 */
export const uploadRoutes: FastifyPluginAsyncZod<UploadRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  app.setValidatorCompiler(skipBodyValidation);
  // Scoped to these routes: no other route of the service accepts multipart.
  await app.register(multipart, {
    throwFileSizeLimit: true,
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 20 },
  });
  // Any other body type reaches the handler (after auth) and is refused there as a 400.
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
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
      await addAttachment(ctx, { ...input, storageKey });
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
      preHandler: auth,
      schema: uploadSchema(documentResponse),
    },
    async (req, reply) => {
      const { accountId } = principalOf(req);
      const { goferId } = req.params;
      await assertOwnsActiveGofer(ctx, accountId, goferId);
      const file = await readFilePart(req);
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
      preHandler: auth,
      schema: uploadSchema(photoResponse),
    },
    async (req, reply) => {
      const { accountId } = principalOf(req);
      const { goferId } = req.params;
      await assertOwnsActiveGofer(ctx, accountId, goferId);
      const file = await readFilePart(req);
      const mimeType = declaredMime(file.partType, file.name);
      if (!isPhotoMime(mimeType) || !(await contentMatches(mimeType, file.bytes))) throw unsupportedMime();
      const { width, height } = photoDimensions(file.bytes);
      const id = ctx.ids();
      const size = file.bytes.length;
      // No image analysis (§4.4 (17)): nothing to wait for, so the photo is `ready` at once.
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

interface FilePart {
  name: string;
  /** The part's Content-Type as the parser reports it. */
  partType: string;
  bytes: Buffer;
}

/** The single part named `file` (§10.8), read into memory up to MAX_UPLOAD_BYTES. */
async function readFilePart(req: FastifyRequest): Promise<FilePart> {
  if (!req.isMultipart()) throw validation('Expected multipart/form-data with a file part named "file"');
  try {
    const part = await req.file();
    if (!part || part.fieldname !== 'file') throw validation('A file part named "file" is required');
    const bytes = await part.toBuffer();
    // toBuffer throws past the limit; `truncated` is the parser's own word for the same thing.
    if (part.file.truncated) throw tooLarge();
    return { name: sanitizeFileName(part.filename), partType: part.mimetype, bytes };
  } catch (err) {
    if (err instanceof HttpError) throw err;
    const status = (err as { statusCode?: unknown }).statusCode;
    if (status === 413) throw tooLarge();
    if (typeof status === 'number' && status >= 400 && status < 500) {
      throw validation(`Malformed multipart request: ${(err as Error).message}`);
    }
    throw err;
  }
}
