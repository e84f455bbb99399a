import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '@oan/eventstore';
import { FilesystemStorage, startFileListener, type FileListener } from '@oan/storage';
import { MAX_UPLOAD_BYTES } from '../src/http/uploads';
import { body, expectError, startGoferFleet, type GoferFleet } from './helpers';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

// ---- Tiny real samples. What `file-type` 21 reports for each, and so the rule of src/infra/sniff.ts:
// pdf → application/pdf; .doc → application/x-cfb (+ a `WordDocument` stream required); docx (a zip
// with word/document.xml) → the docx type, any other zip → application/zip (so a zip is a document
// only when it is a real docx declared as docx); ELF → application/x-elf; PE → application/x-msdownload;
// jpeg/png/webp → themselves; plain text and CSV → nothing (checked as UTF-8 without NUL instead).
const pdf = (pad = 0) =>
  Buffer.concat([Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n'), Buffer.alloc(pad, 0x20)]);
const cfb = (withWordStream: boolean) =>
  Buffer.concat([
    Buffer.from('d0cf11e0a1b11ae1', 'hex'),
    Buffer.alloc(504),
    Buffer.from(withWordStream ? 'WordDocument' : 'SummaryInfo', 'utf16le'),
    Buffer.alloc(40),
  ]);
function zip(entries: [string, string][]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of entries) {
    const data = Buffer.from(text);
    const n = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(n.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt32LE(crc32(data), 16);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(n.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, n, data);
    central.push(entry, n);
    offset += 30 + n.length + data.length;
  }
  const dir = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(dir.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, dir, end]);
}
const CONTENT_TYPES = `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const docx = () =>
  zip([
    ['[Content_Types].xml', CONTENT_TYPES],
    ['word/document.xml', '<w:document/>'],
  ]);
const png = (w: number, h: number) => {
  const b = Buffer.from(
    '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f1e2b20000000049454e44ae426082',
    'hex',
  );
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return b;
};
const jpeg = (w: number, h: number) =>
  Buffer.concat([
    Buffer.from('ffd8ffe000104a46494600010100000100010000', 'hex'),
    Buffer.from([
      0xff,
      0xc0,
      0,
      17,
      8,
      h >> 8,
      h & 255,
      w >> 8,
      w & 255,
      3,
      1,
      0x22,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
    ]),
    Buffer.from('ffd9', 'hex'),
  ]);
function webp(w: number, h: number) {
  const chunk = Buffer.from([0x2f, 0, 0, 0, 0]);
  chunk.writeUInt32LE((((w - 1) & 0x3fff) | (((h - 1) & 0x3fff) << 14)) >>> 0, 1);
  const body = Buffer.concat([Buffer.from('WEBPVP8L'), Buffer.from([5, 0, 0, 0]), chunk, Buffer.alloc(1)]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}
const elf = () => Buffer.concat([Buffer.from('7f454c4602010100', 'hex'), randomBytes(200)]);
const pe = () =>
  Buffer.concat([
    Buffer.from('MZ'),
    Buffer.alloc(58),
    Buffer.from([0x80, 0, 0, 0]),
    Buffer.alloc(64),
    Buffer.from('PE\0\0'),
  ]);

/** One part named `file` (§10.8); `type: null` sends the part without a Content-Type. */
function form(fileName: string, type: string | null, bytes: Buffer, field = 'file') {
  const boundary = `----oan${randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${fileName}"\r\n${type === null ? '' : `Content-Type: ${type}\r\n`}\r\n`;
  return {
    payload: Buffer.concat([Buffer.from(head), bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

let fleet: GoferFleet;
let storage: FilesystemStorage;
let listener: FileListener;
let dir: string;
let clockOffset = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'oan-uploads-'));
  storage = new FilesystemStorage({
    dir,
    secret: 'uploads-test-secret-uploads-test-secret',
    now: () => Date.now() + clockOffset,
  });
  listener = await startFileListener({ storage, host: '127.0.0.1', port: 0 });
  fleet = await startGoferFleet({}, { storage });
});
afterAll(async () => {
  await fleet?.close();
  await listener?.close();
  await rm(dir, { recursive: true, force: true });
});

async function storedFiles(): Promise<number> {
  const entries = await readdir(join(dir, 'objects'), { recursive: true, withFileTypes: true }).catch(
    () => [],
  );
  return entries.filter((e) => e.isFile()).length;
}

async function ownGofer() {
  const { accountId, headers } = await fleet.account();
  const res = await fleet.app.inject({ method: 'POST', url: '/api/v1/gofers', payload: {}, headers });
  expect(res.statusCode).toBe(201);
  return { accountId, headers, goferId: body<{ goferId: string }>(res).goferId };
}

const upload = (
  g: { goferId: string; headers: Record<string, string> },
  what: 'attachments' | 'photos',
  f: ReturnType<typeof form>,
  app = fleet.app,
) =>
  app.inject({
    method: 'POST',
    url: `/api/v1/gofers/${g.goferId}/${what}`,
    payload: f.payload,
    headers: { ...g.headers, ...f.headers },
  });

type DocumentAnswer = {
  attachment: { id: string; name: string; url: string; mimeType: string; size: number; ragStatus: string };
  ragStatus: string;
};
type PhotoAnswer = {
  photo: {
    id: string;
    name: string;
    mimeType: string;
    size: number;
    width: number | null;
    height: number | null;
    source: string;
  };
};

describe('a document upload (§4.4 (16))', () => {
  it.each([
    ['cv.pdf', 'application/pdf', pdf(), 'unsupported'],
    ['cv.doc', 'application/msword', cfb(true), 'unsupported'],
    ['cv.docx', DOCX, docx(), 'unsupported'],
    ['notes.txt', 'text/plain', Buffer.from('I like hiking and 中文.\n'), 'processing'],
    ['table.csv', 'text/csv', Buffer.from('skill,years\nrust,3\n'), 'processing'],
  ])(
    'accepts %s (%s) with a signed URL that serves the exact bytes without credentials',
    async (name, type, bytes, rag) => {
      const g = await ownGofer();
      const res = await upload(g, 'attachments', form(name, type, bytes));
      expect(res.statusCode).toBe(201);
      const answer = body<DocumentAnswer>(res);
      expect(Object.keys(answer).sort()).toEqual(['attachment', 'ragStatus']);
      expect(answer.attachment).toMatchObject({ name, mimeType: type, size: bytes.length, ragStatus: rag });
      expect(answer.ragStatus).toBe(rag);
      expect(answer.attachment.id).toMatch(/^[0-9a-f-]{36}$/);
      const download = await fetch(answer.attachment.url);
      expect(download.status).toBe(200);
      expect(download.headers.get('content-type')).toBe(type);
      expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
      const events = (await fleet.events()).filter(
        (e) => e.type === 'AttachmentAdded' && e.data.attachmentId === answer.attachment.id,
      );
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({
        kind: 'document',
        mimeType: type,
        storageKey: `${g.goferId}/${answer.attachment.id}`,
      });
    },
  );

  it('falls back to the file extension when the part type is absent or application/octet-stream (A11)', async () => {
    const g = await ownGofer();
    for (const [name, type] of [
      ['cv.pdf', 'application/octet-stream'],
      ['cv.PDF', null],
    ] as const) {
      const res = await upload(g, 'attachments', form(name, type, pdf()));
      expect(res.statusCode).toBe(201);
      expect(body<DocumentAnswer>(res).attachment.mimeType).toBe('application/pdf');
    }
  });

  it('refuses a MIME type outside the whitelist with 400 (§12 line 43)', async () => {
    const g = await ownGofer();
    const before = await storedFiles();
    expectError(
      await upload(g, 'attachments', form('a.png', 'image/png', png(1, 1))),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await upload(g, 'attachments', form('a.html', 'text/html', Buffer.from('<p>x</p>'))),
      400,
      'VALIDATION_ERROR',
    );
    expect(await storedFiles()).toBe(before);
  });

  it.each([
    ['an ELF declared as pdf', 'cv.pdf', 'application/pdf', elf()],
    ['a PE declared as pdf', 'cv.pdf', 'application/pdf', pe()],
    ['a plain zip declared as docx', 'cv.docx', DOCX, zip([['payload.exe', 'MZ']])],
    [
      'a compound file without a Word stream declared as msword',
      'setup.doc',
      'application/msword',
      cfb(false),
    ],
    ['an ELF declared as text', 'notes.txt', 'text/plain', elf()],
    ['invalid UTF-8 declared as csv', 't.csv', 'text/csv', Buffer.from([0x61, 0xff, 0xfe, 0x0a])],
    ['an empty file', 'empty.txt', 'text/plain', Buffer.alloc(0)],
  ])('refuses %s with 400 and stores nothing', async (_what, name, type, bytes) => {
    const g = await ownGofer();
    const before = await storedFiles();
    expectError(await upload(g, 'attachments', form(name, type, bytes)), 400, 'VALIDATION_ERROR');
    expect(await storedFiles()).toBe(before);
  });

  it('sanitizes the file name: no path, no control characters', async () => {
    const g = await ownGofer();
    const res = await upload(
      g,
      'attachments',
      form('..\\..\\boot\u0007 notes.txt', 'text/plain', Buffer.from('x')),
    );
    expect(res.statusCode).toBe(201);
    expect(body<DocumentAnswer>(res).attachment.name).toBe('boot notes.txt');
  });
});

describe('a photo upload (§4.4 (17))', () => {
  it.each([
    ['me.jpg', 'image/jpeg', jpeg(640, 480), 640, 480],
    ['me.png', 'image/png', png(3, 2), 3, 2],
    ['me.webp', 'image/webp', webp(300, 200), 300, 200],
  ])(
    'accepts %s with its dimensions and source chat, usable in attachmentIds (§12 line 45)',
    async (name, type, bytes, width, height) => {
      const g = await ownGofer();
      const res = await upload(g, 'photos', form(name, type, bytes));
      expect(res.statusCode).toBe(201);
      const { photo } = body<PhotoAnswer>(res);
      expect(photo).toEqual({
        id: photo.id,
        name,
        mimeType: type,
        size: bytes.length,
        width,
        height,
        source: 'chat',
      });
      const post = await fleet.app.inject({
        method: 'POST',
        url: `/api/v1/gofers/${g.goferId}/chat/messages`,
        payload: { attachmentIds: [photo.id] },
        headers: g.headers,
      });
      expect(post.statusCode).toBe(202);
    },
  );

  it('answers any other type, declared or disguised, with 415 {error: UNSUPPORTED_MIME} and stores nothing', async () => {
    const g = await ownGofer();
    const before = await storedFiles();
    for (const f of [
      form('a.txt', 'text/plain', Buffer.from('hi')),
      form('a.gif', 'image/gif', Buffer.from('GIF89a')),
      form('a.png', 'image/png', pe()),
      form('a.jpg', 'image/jpeg', png(1, 1)),
      form('a.pdf', null, pdf()),
    ]) {
      const res = await upload(g, 'photos', f);
      expect(res.statusCode).toBe(415);
      expect(body(res)).toEqual({ error: 'UNSUPPORTED_MIME', code: 'UNSUPPORTED_MIME' });
    }
    expect(await storedFiles()).toBe(before);
  });
});

describe('the 10 MB limit (§7, A9)', () => {
  it('accepts exactly 10 × 1024 × 1024 bytes and refuses one byte more with 413, storing nothing', async () => {
    const g = await ownGofer();
    const exact = pdf(MAX_UPLOAD_BYTES - pdf().length);
    expect(exact.length).toBe(10 * 1024 * 1024);
    const ok = await upload(g, 'attachments', form('big.pdf', 'application/pdf', exact));
    expect(ok.statusCode).toBe(201);
    expect(body<DocumentAnswer>(ok).attachment.size).toBe(MAX_UPLOAD_BYTES);
    const before = await storedFiles();
    const over = Buffer.concat([exact, Buffer.from(' ')]);
    expectError(
      await upload(g, 'attachments', form('big.pdf', 'application/pdf', over)),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expectError(
      await upload(
        g,
        'photos',
        form('big.png', 'image/png', Buffer.concat([png(1, 1), Buffer.alloc(MAX_UPLOAD_BYTES)])),
      ),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expect(await storedFiles()).toBe(before);
  });
});

describe('over a real connection (fetch + FormData, as the SDK sends it, §10.8)', () => {
  it('uploads, and answers an oversize file (413) or a foreign Gofer (403) without leaving the client hanging', async () => {
    const g = await ownGofer();
    const other = await ownGofer();
    const base = await fleet.app.listen({ host: '127.0.0.1', port: 0 });
    const send = (bytes: Buffer, name: string, type: string, goferId = g.goferId) => {
      const data = new FormData();
      data.append('file', new Blob([bytes], { type }), name);
      return fetch(`${base}/api/v1/gofers/${goferId}/attachments`, {
        method: 'POST',
        body: data,
        headers: g.headers,
        signal: AbortSignal.timeout(20_000),
      });
    };
    const ok = await send(Buffer.from('plain words'), 'a.txt', 'text/plain');
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as DocumentAnswer).attachment.mimeType).toBe('text/plain');
    const before = await storedFiles();
    const big = await send(Buffer.alloc(MAX_UPLOAD_BYTES + 1, 0x61), 'big.txt', 'text/plain');
    expect(big.status).toBe(413);
    expect(await big.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    const foreign = await send(Buffer.alloc(MAX_UPLOAD_BYTES, 0x61), 'x.txt', 'text/plain', other.goferId);
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toEqual({ error: 'Forbidden', code: 'FORBIDDEN' });
    expect(await storedFiles()).toBe(before);
  });
});

describe('the signed URL', () => {
  it('lives about an hour, then answers 403', async () => {
    const g = await ownGofer();
    const { attachment } = body<DocumentAnswer>(
      await upload(g, 'attachments', form('cv.pdf', 'application/pdf', pdf())),
    );
    const expiresAt = Number(new URL(attachment.url).searchParams.get('exp')) * 1000;
    expect(expiresAt - Date.now()).toBeGreaterThan(3590_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(3601_000);
    expect((await fetch(attachment.url, { headers: g.headers })).status).toBe(200);
    clockOffset = expiresAt - Date.now() + 1000;
    try {
      expect((await fetch(attachment.url)).status).toBe(403);
    } finally {
      clockOffset = 0;
    }
  });
});

describe('when the Gofer is not the caller’s, or the request is not an upload', () => {
  it('answers an unknown, a foreign and a deleted Gofer with the chat route’s byte-identical 403 (§6)', async () => {
    const mine = await ownGofer();
    const other = await ownGofer();
    const reference = await fleet.app.inject({
      method: 'POST',
      url: `/api/v1/gofers/${other.goferId}/chat/messages`,
      payload: { content: 'x' },
      headers: mine.headers,
    });
    expect(reference.statusCode).toBe(403);
    const deleted = await fleet.app.inject({
      method: 'DELETE',
      url: `/api/v1/gofers/${mine.goferId}`,
      headers: mine.headers,
    });
    expect(deleted.statusCode).toBe(200);
    const before = await storedFiles();
    for (const goferId of [other.goferId, 'no-such-gofer', mine.goferId, '..%2F..']) {
      for (const [what, f] of [
        ['attachments', form('cv.pdf', 'application/pdf', pdf())],
        ['photos', form('a.png', 'image/png', png(1, 1))],
      ] as const) {
        const res = await upload({ goferId, headers: mine.headers }, what, f);
        expect(res.statusCode).toBe(403);
        expect(res.body).toBe(reference.body);
      }
    }
    expect(await storedFiles()).toBe(before);
  });

  it('needs a credential (401), a part named file and a multipart body (400)', async () => {
    const g = await ownGofer();
    expectError(
      await upload({ ...g, headers: {} }, 'attachments', form('cv.pdf', 'application/pdf', pdf())),
      401,
      'UNAUTHORIZED',
    );
    expectError(
      await upload(g, 'attachments', form('cv.pdf', 'application/pdf', pdf(), 'document')),
      400,
      'VALIDATION_ERROR',
    );
    for (const [type, payload] of [
      ['application/json', '{}'],
      ['application/pdf', pdf().toString()],
    ] as const) {
      const res = await fleet.app.inject({
        method: 'POST',
        url: `/api/v1/gofers/${g.goferId}/attachments`,
        payload,
        headers: { ...g.headers, 'content-type': type },
      });
      expectError(res, 400, 'VALIDATION_ERROR');
    }
  });

  it('removes the stored bytes when the event cannot be appended', async () => {
    class FailingStore extends EventStore {
      override append(): never {
        throw new Error('database went away');
      }
    }
    const failing = await fleet.buildAnother(
      {},
      { ctx: { ...fleet.ctx, store: new FailingStore('gofers') }, storage },
    );
    const g = await ownGofer();
    const before = await storedFiles();
    const res = await upload(g, 'attachments', form('cv.pdf', 'application/pdf', pdf()), failing);
    expect(res.statusCode).toBe(500);
    expect(await storedFiles()).toBe(before);
  });

  it('is described in the service’s OpenAPI document', async () => {
    type Operation = {
      requestBody: { content: Record<string, unknown> };
      responses: Record<string, unknown>;
    };
    const doc = body<{ paths: Record<string, Record<string, Operation>> }>(
      await fleet.app.inject({ method: 'GET', url: '/openapi.json' }),
    );
    for (const what of ['attachments', 'photos']) {
      const op = doc.paths[`/api/v1/gofers/{goferId}/${what}`]!.post!;
      expect(Object.keys(op.requestBody.content)).toEqual(['multipart/form-data']);
      expect(Object.keys(op.responses)).toContain('201');
    }
  });

  it('does not exist without a storage adapter (§0.5)', async () => {
    const none = await fleet.buildAnother({}, { storage: null });
    const g = await ownGofer();
    expectError(
      await upload(g, 'attachments', form('cv.pdf', 'application/pdf', pdf()), none),
      404,
      'NOT_FOUND',
    );
    expectError(await upload(g, 'photos', form('a.png', 'image/png', png(1, 1)), none), 404, 'NOT_FOUND');
  });
});
