import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { BodyTooLargeError, isBodyTooLarge, limitedBody } from '../src/bodyLimit.ts';

const request = (headers: Record<string, string> = {}) => ({ headers }) as unknown as FastifyRequest;
const chunks = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)));

describe('a body without Content-Length', () => {
  it('passes through unchanged up to the limit', async () => {
    expect(await text(limitedBody(request(), chunks('abc', 'de'), 5))).toBe('abcde');
  });

  it('fails with BodyTooLargeError one byte past the limit, before that chunk is passed on', async () => {
    const seen: string[] = [];
    const body = limitedBody(request(), chunks('abc', 'def'), 5);
    body.on('data', (c: Buffer) => seen.push(c.toString()));
    const err = await new Promise((resolve) => body.once('error', resolve));
    expect(err).toBeInstanceOf(BodyTooLargeError);
    expect(seen).toEqual(['abc']);
  });
});

describe('a body with Content-Length', () => {
  it('is the request stream itself (its length was checked before routing)', () => {
    const payload = chunks('abc');
    expect(limitedBody(request({ 'content-length': '3' }), payload, 1)).toBe(payload);
  });
});

describe('isBodyTooLarge', () => {
  it('finds the error under the wrappers reply-from adds', () => {
    const wrapped = new Error('Internal Server Error', { cause: new BodyTooLargeError(5) });
    expect(isBodyTooLarge(wrapped)).toBe(true);
    expect(isBodyTooLarge(new Error('other', { cause: new Error('ECONNRESET') }))).toBe(false);
    expect(isBodyTooLarge(undefined)).toBe(false);
  });
});
