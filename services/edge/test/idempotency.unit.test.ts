import { describe, expect, it } from 'vitest';
import { requestFingerprint } from '../src/idempotency/fingerprint.ts';
import { parseIdempotencyKey } from '../src/idempotency/key.ts';

describe('parseIdempotencyKey', () => {
  it('takes the draft’s sf-string, unescaping \\" and \\\\', () => {
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toEqual({
      key: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    });
    expect(parseIdempotencyKey('"a \\"b\\" \\\\c"')).toEqual({ key: 'a "b" \\c' });
  });

  it('takes a bare key as many clients send it', () => {
    expect(parseIdempotencyKey('order-42_retry.ok')).toEqual({ key: 'order-42_retry.ok' });
  });

  it.each([
    ['an empty key', '""'],
    ['an empty header', ''],
    ['a bare key with a space', 'a b'],
    ['two header lines joined', 'a, b'],
    ['two sf-strings', '"a", "b"'],
    ['a lone escape', '"a\\b"'],
    ['a non-ASCII key', '"clé"'],
    ['an unterminated string', '"abc'],
    ['a key over 255 characters', 'k'.repeat(256)],
  ])('refuses %s', (_what, value) => {
    expect(parseIdempotencyKey(value)).toHaveProperty('error');
  });

  it('takes a key of exactly 255 characters', () => {
    expect(parseIdempotencyKey(`"${'k'.repeat(255)}"`)).toEqual({ key: 'k'.repeat(255) });
  });
});

describe('requestFingerprint', () => {
  const json = Buffer.from('{"locale":"en"}');
  const fp = (method: string, url: string, type: string, body: Buffer) =>
    requestFingerprint(method, url, type, body);

  it('is the same for the same request and differs for another body, path, query or type', () => {
    const base = fp('POST', '/api/v1/gofers', 'application/json', json);
    expect(fp('POST', '/api/v1/gofers', 'application/json', Buffer.from(json))).toBe(base);
    expect(fp('POST', '/api/v1/gofers', 'application/json', Buffer.from('{"locale":"de"}'))).not.toBe(base);
    expect(fp('POST', '/api/v1/gofers/x', 'application/json', json)).not.toBe(base);
    expect(fp('POST', '/api/v1/gofers?a=1', 'application/json', json)).not.toBe(base);
    expect(fp('POST', '/api/v1/gofers', 'text/plain', json)).not.toBe(base);
  });

  it('ignores a multipart boundary, the one thing a retried upload changes', () => {
    const body = (b: string, content: string) =>
      Buffer.from(
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n` +
          `Content-Type: text/plain\r\n\r\n${content}\r\n--${b}--\r\n`,
      );
    const one = fp('POST', '/u', 'multipart/form-data; boundary=AAA111', body('AAA111', 'hello'));
    const two = fp('POST', '/u', 'multipart/form-data; boundary="BBB222"', body('BBB222', 'hello'));
    const other = fp('POST', '/u', 'multipart/form-data; boundary=CCC333', body('CCC333', 'hellO'));
    expect(two).toBe(one);
    expect(other).not.toBe(one);
  });
});
