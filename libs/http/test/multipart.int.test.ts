import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHttpApp,
  MAX_UPLOAD_BYTES,
  readFilePart,
  registerUploadScope,
  UPLOAD_BODY_LIMIT,
} from '../src/index.ts';

/** readFilePart through a route, with multipart bodies written out byte by byte. */
let app: Awaited<ReturnType<typeof createHttpApp>>;

beforeAll(async () => {
  app = await createHttpApp({ name: 't', logLevel: 'silent', metrics: false });
  await app.register(async (scope) => {
    await registerUploadScope(scope);
    scope.post('/up', async (req) => {
      const { fileName, partType, bytes } = await readFilePart(req);
      return { fileName: fileName ?? null, partType: partType ?? null, size: bytes.length };
    });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await app?.close();
});

const B = 'oan-test-boundary';
const part = (headers: string[], content: string | Buffer) =>
  Buffer.concat([
    Buffer.from(`--${B}\r\n${headers.join('\r\n')}\r\n\r\n`),
    Buffer.from(content),
    Buffer.from('\r\n'),
  ]);
const file = (headers: string[] = ['Content-Type: text/plain'], content: string | Buffer = 'hello') =>
  part(['Content-Disposition: form-data; name="file"; filename="a.txt"', ...headers], content);
const field = (name: string, value: string) =>
  part([`Content-Disposition: form-data; name="${name}"`], value);
const end = Buffer.from(`--${B}--\r\n`);
const body = (...parts: Buffer[]) => Buffer.concat(parts);

const post = (payload: Buffer, contentType = `multipart/form-data; boundary=${B}`) =>
  app.inject({ method: 'POST', url: '/up', payload, headers: { 'content-type': contentType } });
const answer = async (payload: Buffer, contentType?: string) => {
  const res = await post(payload, contentType);
  return { status: res.statusCode, body: res.json<Record<string, unknown>>() };
};
const validationError = { error: expect.any(String), code: 'VALIDATION_ERROR' };

describe('the part type', () => {
  it('is undefined for a part without a Content-Type, so it can be told from a declared text/plain', async () => {
    expect(await answer(body(file([]), end))).toEqual({
      status: 200,
      body: { fileName: 'a.txt', partType: null, size: 5 },
    });
    expect(await answer(body(file(['Content-Type: text/plain']), end))).toMatchObject({
      body: { partType: 'text/plain' },
    });
    expect(await answer(body(file(['Content-Type: application/pdf; x=1']), end))).toMatchObject({
      body: { partType: 'application/pdf' },
    });
  });
});

describe('the file part', () => {
  it('is the first part with a file name, after any fields; a second file is not looked at', async () => {
    const res = await answer(body(field('note', 'x'), file(), file([], 'second'), end));
    expect(res).toEqual({ status: 200, body: { fileName: 'a.txt', partType: 'text/plain', size: 5 } });
  });

  it('must be named file (400), and must be there (400)', async () => {
    const other = part(['Content-Disposition: form-data; name="document"; filename="a.txt"'], 'x');
    expect(await answer(body(other, file(), end))).toEqual({ status: 400, body: validationError });
    expect(await answer(body(field('file', 'not a file'), end))).toEqual({
      status: 400,
      body: validationError,
    });
  });

  it('holds exactly MAX_UPLOAD_BYTES; one byte more is the 413 of today', async () => {
    const exact = await answer(body(file([], Buffer.alloc(MAX_UPLOAD_BYTES, 0x61)), end));
    expect(exact).toMatchObject({ status: 200, body: { size: MAX_UPLOAD_BYTES } });
    expect(await answer(body(file([], Buffer.alloc(MAX_UPLOAD_BYTES + 1, 0x61)), end))).toEqual({
      status: 413,
      body: { error: `File larger than ${MAX_UPLOAD_BYTES} bytes`, code: 'PAYLOAD_TOO_LARGE' },
    });
  });
});

describe('bounds on what comes before the file', () => {
  it('at most 20 parts', async () => {
    const fields = Array.from({ length: 20 }, (_, i) => field(`f${i}`, 'v'));
    expect(await answer(body(...fields, file(), end))).toEqual({
      status: 413,
      body: { error: expect.any(String), code: 'PAYLOAD_TOO_LARGE' },
    });
    expect((await answer(body(...fields.slice(1), file(), end))).status).toBe(200);
  });

  it('at most UPLOAD_BODY_LIMIT of content in all', async () => {
    const big = field('f', 'x'.repeat(UPLOAD_BODY_LIMIT - MAX_UPLOAD_BYTES + 1));
    expect(await answer(body(big, file([], Buffer.alloc(MAX_UPLOAD_BYTES, 0x61)), end))).toEqual({
      status: 413,
      body: { error: expect.any(String), code: 'PAYLOAD_TOO_LARGE' },
    });
  });
});

describe('a body that is not a well-formed multipart/form-data upload', () => {
  it.each([
    ['JSON', Buffer.from('{}'), 'application/json'],
    ['multipart/mixed', body(file(), end), `multipart/mixed; boundary=${B}`],
    ['no boundary', body(file(), end), 'multipart/form-data'],
    ['an empty body', Buffer.alloc(0), undefined],
    ['no opening boundary', Buffer.from('garbage'), undefined],
    [
      'a part cut short',
      Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nhel`),
      undefined,
    ],
    ['a file with no boundary after it', file(), undefined],
    [
      'a part header that is not UTF-8',
      body(
        Buffer.from(
          `--${B}\r\nContent-Disposition: form-data; name="file"; filename="\xff"\r\n\r\nx\r\n`,
          'latin1',
        ),
        end,
      ),
      undefined,
    ],
  ])('is a 400 with the error body: %s', async (_what, payload, contentType) => {
    expect(await answer(payload, contentType)).toEqual({ status: 400, body: validationError });
  });
});

describe('over a socket', () => {
  it('answers an upload whose closing boundary and final CRLF arrive in separate writes', async () => {
    const port = (app.server.address() as AddressInfo).port;
    const payload = body(file(), end);
    const head = `POST /up HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${B}\r\nContent-Length: ${payload.length}\r\nConnection: close\r\n\r\n`;
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.write(head);
      socket.write(payload.subarray(0, payload.length - 2));
      setImmediate(() => socket.end(payload.subarray(payload.length - 2)));
    });
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({
      fileName: 'a.txt',
      partType: 'text/plain',
      size: 5,
    });
  });
});
