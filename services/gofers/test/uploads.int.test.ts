import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '@oan/eventstore';
import { FilesystemStorage, startFileListener, type FileListener } from '@oan/storage';
import { MAX_UPLOAD_BYTES } from '@oan/http';
import { body, expectError, cfb, docx, elf, form, jpeg, pdf, pe, png, webp, zip } from '@oan/testing';
import { startGoferFleet, type GoferFleet } from './helpers.ts';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

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

describe('a document upload', () => {
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

  describe('when the part declares its type, or does not (the part type first, then the extension)', () => {
    const noTypeHeader = (f: ReturnType<typeof form>) =>
      expect(f.payload.toString('latin1')).not.toMatch(/content-type/i);

    it('takes a part without a Content-Type by its extension: x.pdf with PDF bytes is a pdf', async () => {
      const g = await ownGofer();
      const f = form('x.pdf', null, pdf());
      noTypeHeader(f);
      const res = await upload(g, 'attachments', f);
      expect(res.statusCode).toBe(201);
      expect(body<DocumentAnswer>(res).attachment).toMatchObject({
        name: 'x.pdf',
        mimeType: 'application/pdf',
      });
    });

    it('takes a declared text/plain as text: x.pdf with PDF bytes is refused as not text, nothing stored', async () => {
      const g = await ownGofer();
      const before = await storedFiles();
      const res = await upload(g, 'attachments', form('x.pdf', 'text/plain', pdf()));
      expect(res.statusCode).toBe(400);
      expect(body(res)).toEqual({
        error: 'The file content is not a valid text/plain document',
        code: 'VALIDATION_ERROR',
      });
      expect(await storedFiles()).toBe(before);
    });

    it('accepts a declared text/plain with UTF-8 text', async () => {
      const g = await ownGofer();
      const res = await upload(
        g,
        'attachments',
        form('notes.txt', 'text/plain', Buffer.from('Grüße, 中文\n')),
      );
      expect(res.statusCode).toBe(201);
      expect(body<DocumentAnswer>(res).attachment).toMatchObject({
        mimeType: 'text/plain',
        ragStatus: 'processing',
      });
    });

    it('takes application/octet-stream by its extension: a .png with PNG bytes is image/png', async () => {
      const g = await ownGofer();
      const res = await upload(g, 'photos', form('me.png', 'application/octet-stream', png(4, 3)));
      expect(res.statusCode).toBe(201);
      expect(body<PhotoAnswer>(res).photo).toMatchObject({ mimeType: 'image/png', width: 4, height: 3 });
    });

    it('takes a part without a Content-Type and no known extension as text/plain (RFC 7578 §4.4)', async () => {
      const g = await ownGofer();
      const res = await upload(g, 'attachments', form('README', null, Buffer.from('read me\n')));
      expect(res.statusCode).toBe(201);
      expect(body<DocumentAnswer>(res).attachment.mimeType).toBe('text/plain');
    });

    it('reads the extension in any letter case, for an absent type and for application/octet-stream', async () => {
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
  });

  it('refuses a MIME type outside the whitelist with 400', async () => {
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
      form('../../boot\u0007 notes.txt', 'text/plain', Buffer.from('x')),
    );
    expect(res.statusCode).toBe(201);
    expect(body<DocumentAnswer>(res).attachment.name).toBe('boot notes.txt');
    // In a quoted file name the parser reads a backslash as escaping the next character (RFC 9110
    // §5.6.4), so a Windows path loses its separators rather than its folders; never a path, and
    // the extension, which the type may be taken from, stays.
    const windows = await upload(g, 'attachments', form('C:\\Users\\me\\notes.txt', null, Buffer.from('x')));
    expect(windows.statusCode).toBe(201);
    const { name, mimeType } = body<DocumentAnswer>(windows).attachment;
    expect(name).not.toMatch(/[\\/]/);
    expect(name.endsWith('notes.txt')).toBe(true);
    expect(mimeType).toBe('text/plain');
  });
});

describe('a photo upload', () => {
  it.each([
    ['me.jpg', 'image/jpeg', jpeg(640, 480), 640, 480],
    ['me.png', 'image/png', png(3, 2), 3, 2],
    ['me.webp', 'image/webp', webp(300, 200), 300, 200],
  ])(
    'accepts %s with its dimensions and source chat, usable in attachmentIds',
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

describe('the 10 MB limit (413 PAYLOAD_TOO_LARGE)', () => {
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

describe('over a real connection (fetch + FormData, as the SDK sends it)', () => {
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
  it('answers an unknown, a foreign and a deleted Gofer with the chat route’s byte-identical 403', async () => {
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

  it('does not exist without a storage adapter', async () => {
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
