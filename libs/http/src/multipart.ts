import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  MaxFileSizeExceededError,
  MaxPartsExceededError,
  MaxTotalSizeExceededError,
  parseMultipartRequest,
} from '@remix-run/multipart-parser/node';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ErrorCodes } from '@oan/protocol';
import { HttpError, validation } from './errors.ts';
import { MAX_UPLOAD_BYTES, UPLOAD_BODY_LIMIT } from './limits.ts';

/** At most this many parts (the file and a few small fields) in one upload. */
const MAX_PARTS = 20;
/** A part's headers, like the request's own (Node's default header limit). */
const MAX_PART_HEADER_BYTES = 16 * 1024;

export const uploadTooLarge = () =>
  new HttpError(413, ErrorCodes.payloadTooLarge, `File larger than ${MAX_UPLOAD_BYTES} bytes`);

/** For the OpenAPI document only: the part is read from the stream, never validated as a body. */
export const multipartFileBody = z.object({
  file: z.string().meta({
    format: 'binary',
    description:
      'the file; its part Content-Type is its MIME type (absent or application/octet-stream: the extension of the file name decides)',
  }),
});

/**
 * Makes the plugin scope an upload scope: the body of every request is left unread for
 * `readFilePart`, which refuses anything but multipart/form-data as a 400 in the handler, after
 * authentication, so credentials are always checked first.
 */
export async function registerUploadScope(app: FastifyInstance): Promise<void> {
  const skipBody: typeof validatorCompiler = (route) =>
    route.httpPart === 'body' ? () => ({ value: undefined }) : validatorCompiler(route);
  app.setValidatorCompiler(skipBody as Parameters<FastifyInstance['setValidatorCompiler']>[0]);
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
}

export interface FilePart {
  /** The file name as the client sent it (sanitize before storing or echoing it). */
  fileName: string | undefined;
  /** The media type of the part's Content-Type header; undefined when the part has none (the type then comes from the file name's extension). */
  partType: string | undefined;
  bytes: Buffer;
}

const isFormData = (req: FastifyRequest) =>
  /^multipart\/form-data\s*(;|$)/i.test(req.headers['content-type']?.trim() ?? '');

/**
 * The first file part, which must be named `file` (as the SDK sends it), read into memory up to MAX_UPLOAD_BYTES.
 * The parser holds one part at a time and at most UPLOAD_BODY_LIMIT of content in all; what follows
 * the file is left unread (Node discards it once the answer is sent).
 */
export async function readFilePart(req: FastifyRequest): Promise<FilePart> {
  if (!isFormData(req)) throw validation('Expected multipart/form-data with a file part named "file"');
  try {
    const parts = parseMultipartRequest(req.raw, {
      maxFileSize: MAX_UPLOAD_BYTES,
      maxTotalSize: UPLOAD_BODY_LIMIT,
      maxParts: MAX_PARTS,
      maxHeaderSize: MAX_PART_HEADER_BYTES,
    });
    for await (const part of parts) {
      // A file is a part with a file name or declared application/octet-stream; fields are skipped.
      if (!part.isFile) continue;
      if (part.name !== 'file') break;
      // `mediaType` is undefined when the part has no Content-Type: the MIME type then goes by the extension.
      return { fileName: part.filename, partType: part.mediaType, bytes: Buffer.concat(part.content) };
    }
    throw validation('A file part named "file" is required');
  } catch (err) {
    if (err instanceof HttpError) throw err;
    if (err instanceof MaxFileSizeExceededError) throw uploadTooLarge();
    if (err instanceof MaxTotalSizeExceededError || err instanceof MaxPartsExceededError) {
      throw new HttpError(413, ErrorCodes.payloadTooLarge, err.message);
    }
    // Everything else here is the request's framing (no boundary, a truncated part, a header that
    // is not UTF-8, a client that went away): nothing of ours has run yet, so it is the client's
    // 400, never a 500.
    throw validation(`Malformed multipart request: ${(err as Error).message}`);
  }
}
