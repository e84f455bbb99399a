import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorCodes } from '@oan/protocol';
import { HttpError, validation } from './errors';
import { MAX_UPLOAD_BYTES } from './limits';

export const uploadTooLarge = () =>
  new HttpError(413, ErrorCodes.payloadTooLarge, `File larger than ${MAX_UPLOAD_BYTES} bytes`);

/** For the OpenAPI document only: the part is read from the stream, never validated as a body. */
export const multipartFileBody = z.object({
  file: z.string().meta({ format: 'binary', description: 'the file; part content type = its MIME type' }),
});

/**
 * Makes the plugin scope an upload scope: multipart with one file of at most MAX_UPLOAD_BYTES, the
 * body left to `readFilePart`, and any other content type passed through to the handler (which
 * refuses it as a 400 after authentication, so credentials are always checked first).
 */
export async function registerUploadScope(app: FastifyInstance): Promise<void> {
  const skipBody: typeof validatorCompiler = (route) =>
    route.httpPart === 'body' ? () => ({ value: undefined }) : validatorCompiler(route);
  app.setValidatorCompiler(skipBody as Parameters<FastifyInstance['setValidatorCompiler']>[0]);
  await app.register(multipart, {
    throwFileSizeLimit: true,
    limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 20 },
  });
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
}

export interface FilePart {
  /** The file name as the client sent it (sanitize before storing or echoing it). */
  fileName: string | undefined;
  /** The part's Content-Type as the parser reports it. */
  partType: string;
  bytes: Buffer;
}

/** The single part named `file` (§10.8), read into memory up to MAX_UPLOAD_BYTES. */
export async function readFilePart(req: FastifyRequest): Promise<FilePart> {
  if (!req.isMultipart()) throw validation('Expected multipart/form-data with a file part named "file"');
  try {
    const part = await req.file();
    if (!part || part.fieldname !== 'file') throw validation('A file part named "file" is required');
    const bytes = await part.toBuffer();
    // toBuffer throws past the limit; `truncated` is the parser's own word for the same thing.
    if (part.file.truncated) throw uploadTooLarge();
    return { fileName: part.filename, partType: part.mimetype, bytes };
  } catch (err) {
    if (err instanceof HttpError) throw err;
    const status = (err as { statusCode?: unknown }).statusCode;
    if (status === 413) throw uploadTooLarge();
    // Everything else here is the request's framing (no boundary, a truncated part, a client that
    // went away): nothing of ours has run yet, so it is the client's 400, never a 500.
    throw validation(`Malformed multipart request: ${(err as Error).message}`);
  }
}
