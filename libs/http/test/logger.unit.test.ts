import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { REDACT_PATHS } from '../src/logger.ts';

/** What a line logged with the fleet's redaction holds. */
function logged(obj: Record<string, unknown>): string {
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink).info(obj, 'a line');
  return out;
}

describe('a log line that carries credentials', () => {
  it('shows none of a request’s authorization or internal-call header, a token, key or code', () => {
    const line = logged({
      req: { headers: { authorization: 'Bearer oan_secret_key', 'x-oan-internal': 'internal-secret' } },
      headers: { 'x-oan-internal': 'internal-secret-2' },
      token: 'jwt.jwt.jwt',
      apiKey: 'oan_key',
      code: '123456',
      nested: { idToken: 'google-token' },
    });
    for (const secret of [
      'oan_secret_key',
      'internal-secret',
      'jwt.jwt.jwt',
      'oan_key',
      '123456',
      'google-token',
    ])
      expect(line).not.toContain(secret);
    expect(line).toContain('[redacted]');
  });
});
