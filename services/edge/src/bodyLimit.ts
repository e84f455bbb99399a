import { Transform, type Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCodes } from '@oan/protocol';

/**
 * Body limits at the edge. An owner refuses an oversized body with a 413 sent before it reads the
 * body, then closes the connection; the edge, still streaming the body, may see that as a reset
 * before it has read the 413 (the reset discards it), and could only answer 503. So the edge never
 * lets an owner see more than its limit: a declared Content-Length over it is answered here, and a
 * body without one (chunked) is counted and cut one byte past the limit.
 */

/** Marks the upstream request failed because the body outgrew its limit (see `limitedBody`). */
export class BodyTooLargeError extends Error {
  readonly code = 'OAN_BODY_TOO_LARGE';
  readonly limit: number;
  constructor(limit: number) {
    super(`request body larger than ${limit} bytes`);
    this.limit = limit;
  }
}

/** True when `error` or one of its causes (reply-from and undici wrap it) is a BodyTooLargeError. */
export function isBodyTooLarge(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++, e = e.cause) {
    if (e instanceof BodyTooLargeError) return true;
  }
  return false;
}

/** The `{ error, code }` JSON body of the 413, as the services' own error handler words it. */
export const TOO_LARGE = { error: 'Payload too large', code: ErrorCodes.payloadTooLarge } as const;

function declaredLength(req: FastifyRequest): number | undefined {
  const header = req.headers['content-length'];
  return header === undefined ? undefined : Number(header);
}

/**
 * An onRequest hook answering 413 when the declared length is over the limit, before any of the
 * body is read. The connection stays open: Node reads and drops the unread body, so the client can
 * finish sending and then read the answer (a close here would race the client as the owner's does).
 */
export function refuseDeclaredOverLimit(limitOf: (req: FastifyRequest) => number) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const declared = declaredLength(req);
    if (declared !== undefined && declared > limitOf(req)) return reply.status(413).send(TOO_LARGE);
  };
}

/**
 * The body to stream upstream. With a Content-Length (already checked, and Node delivers exactly
 * that many bytes) it is the request itself; without one it goes through a counter that fails the
 * upstream request with BodyTooLargeError at `limit + 1` bytes. Whatever the client still sends
 * after the upstream request ends early is drained, so the client can read the edge's answer.
 */
export function limitedBody(req: FastifyRequest, payload: Readable, limit: number): Readable {
  if (declaredLength(req) !== undefined) return payload;
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      seen += chunk.length;
      if (seen > limit) next(new BodyTooLargeError(limit));
      else next(null, chunk);
    },
  });
  payload.on('error', (err) => counter.destroy(err));
  counter.once('close', () => {
    if (payload.readableEnded) return;
    payload.unpipe(counter);
    payload.resume();
  });
  return payload.pipe(counter);
}
