import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UPLOAD_BYTES } from '@oan/http';
import { body, expectError, elf, form, jpeg, pdf, png, waitFor } from '@oan/testing';
import { startConversationFleet, type ConversationFleet, type Match } from './helpers.ts';

interface Attachment {
  attachmentId: string;
  kind: 'photo' | 'document';
  name: string;
  mimeType: string;
  size: number;
  width?: number;
  height?: number;
}
interface Message {
  id: string;
  content: string;
  attachments: Attachment[];
  changeSequence: string;
}

let f: ConversationFleet;
beforeAll(async () => {
  f = await startConversationFleet();
}, 60_000);
afterAll(async () => {
  await f?.close();
});

type Who = { headers: Record<string, string> };
const upload = (m: Pick<Match, 'conversationId'>, who: Who, file: ReturnType<typeof form>, query = '') =>
  f.app.inject({
    method: 'POST',
    url: `/api/v1/conversations/${m.conversationId}/attachments${query}`,
    headers: { ...who.headers, ...file.headers },
    payload: file.payload,
  });
const urlOf = (m: Pick<Match, 'conversationId'>, who: Who, attachmentId: string) =>
  f.app.inject({
    method: 'GET',
    url: `/api/v1/conversations/${m.conversationId}/attachments/${attachmentId}/url`,
    headers: who.headers,
  });
const send = (m: Pick<Match, 'conversationId'>, who: Who, payload: object) =>
  f.app.inject({
    method: 'POST',
    url: `/api/v1/conversations/${m.conversationId}/messages`,
    headers: who.headers,
    payload,
  });

describe('POST /conversations/:id/attachments', () => {
  it('stores a photo (kind from the MIME type, size from the bytes) in the frozen shape', async () => {
    const m = await f.match();
    const res = await upload(m, m.a, form('me.png', 'image/png', png(640, 480)));
    expect(res.statusCode).toBe(201);
    const { attachment } = body<{ attachment: Attachment }>(res);
    expect(Object.keys(attachment)).toEqual([
      'attachmentId',
      'kind',
      'name',
      'mimeType',
      'size',
      'width',
      'height',
    ]);
    expect(attachment).toMatchObject({
      kind: 'photo',
      name: 'me.png',
      mimeType: 'image/png',
      width: 640,
      height: 480,
    });
    expect(attachment.size).toBe(png(640, 480).length);
  });

  it('takes kind, width and height from the query; documents carry no sizes', async () => {
    const m = await f.match();
    const photo = body<{ attachment: Attachment }>(
      await upload(m, m.a, form('x.jpg', 'image/jpeg', jpeg(10, 20)), '?width=300&height=200'),
    ).attachment;
    expect(photo).toMatchObject({ kind: 'photo', width: 300, height: 200 });
    // Half a pair from the query never mixes with the image's own sizes: the image's pair wins.
    const half = body<{ attachment: Attachment }>(
      await upload(m, m.a, form('y.jpg', 'image/jpeg', jpeg(10, 20)), '?width=300'),
    ).attachment;
    expect(half).toMatchObject({ kind: 'photo', width: 10, height: 20 });
    const asDoc = body<{ attachment: Attachment }>(
      await upload(m, m.a, form('scan.png', 'image/png', png(5, 5)), '?kind=document&width=9'),
    ).attachment;
    expect(asDoc.kind).toBe('document');
    expect(asDoc).not.toHaveProperty('width');
    const doc = body<{ attachment: Attachment }>(
      await upload(m, m.a, form('cv.pdf', 'application/pdf', pdf())),
    ).attachment;
    expect(Object.keys(doc)).toEqual(['attachmentId', 'kind', 'name', 'mimeType', 'size']);
    expect(doc.kind).toBe('document');
  });

  it('refuses other types and lying bytes (415), oversize files (413), bad options (400); stores nothing', async () => {
    const m = await f.match();
    const before = (await f.events()).length;
    expectError(
      await upload(m, m.a, form('a.gif', 'image/gif', Buffer.from('GIF89a....'))),
      415,
      'UNSUPPORTED_MIME',
    );
    expectError(await upload(m, m.a, form('a.pdf', 'application/pdf', elf())), 415, 'UNSUPPORTED_MIME');
    expectError(await upload(m, m.a, form('a.png', 'image/png', pdf())), 415, 'UNSUPPORTED_MIME');
    const big = await upload(m, m.a, form('big.txt', 'text/plain', Buffer.alloc(MAX_UPLOAD_BYTES + 1, 0x61)));
    expectError(big, 413, 'PAYLOAD_TOO_LARGE');
    expectError(
      await upload(m, m.a, form('a.png', 'image/png', png(1, 1)), '?kind=video'),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await upload(m, m.a, form('a.png', 'image/png', png(1, 1)), '?width=-3'),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await upload(m, m.a, form('a.png', 'image/png', png(1, 1)), '?width=abc'),
      400,
      'VALIDATION_ERROR',
    );
    const json = await f.app.inject({
      method: 'POST',
      url: `/api/v1/conversations/${m.conversationId}/attachments`,
      headers: m.a.headers,
      payload: { file: 'x' },
    });
    expectError(json, 400, 'VALIDATION_ERROR');
    expect((await f.events()).length).toBe(before);
  });

  it('takes the declared part type; only an absent one or octet-stream goes by the extension', async () => {
    const m = await f.match();
    const uploaded = async (file: ReturnType<typeof form>) => {
      const res = await upload(m, m.a, file);
      expect(res.statusCode, res.body).toBe(201);
      return body<{ attachment: Attachment }>(res).attachment;
    };
    const noType = form('x.pdf', null, pdf());
    expect(noType.payload.toString('latin1')).not.toMatch(/content-type/i);
    expect(await uploaded(noType)).toMatchObject({ kind: 'document', mimeType: 'application/pdf' });
    expect(await uploaded(form('notes.txt', 'text/plain', Buffer.from('hello, 世界\n')))).toMatchObject({
      kind: 'document',
      mimeType: 'text/plain',
    });
    expect(await uploaded(form('me.png', 'application/octet-stream', png(2, 2)))).toMatchObject({
      kind: 'photo',
      mimeType: 'image/png',
    });
    const before = (await f.events()).length;
    const asText = await upload(m, m.a, form('x.pdf', 'text/plain', pdf()));
    expect(asText.statusCode).toBe(415);
    expect(body(asText)).toEqual({ error: 'UNSUPPORTED_MIME', code: 'UNSUPPORTED_MIME' });
    expect((await f.events()).length).toBe(before);
  });

  it('answers a non-participant 403 before reading the file', async () => {
    const m = await f.match();
    const third = await f.account();
    expectError(await upload(m, third, form('a.png', 'image/png', png(1, 1))), 403, 'FORBIDDEN');
    expectError(
      await upload({ conversationId: randomUUID() }, third, form('a.png', 'image/png', png(1, 1))),
      403,
      'FORBIDDEN',
    );
  });
});

describe('attachments on messages and in relay_message', () => {
  it('sends up to ten of the caller’s own unused uploads; content is "" without text', async () => {
    const m = await f.match();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push(
        body<{ attachment: Attachment }>(await upload(m, m.a, form(`p${i}.png`, 'image/png', png(i + 1, 1))))
          .attachment.attachmentId,
      );
    }
    const res = await send(m, m.a, { attachmentIds: ids });
    expect(res.statusCode).toBe(201);
    const msg = body<Message>(res);
    expect(msg.content).toBe('');
    expect(msg.attachments.map((a) => a.attachmentId)).toEqual(ids);
    expect(msg.attachments[3]).toMatchObject({ kind: 'photo', width: 4, height: 1 });
    // Used once only.
    expectError(await send(m, m.a, { content: 'again', attachmentIds: [ids[0]] }), 400, 'VALIDATION_ERROR');
    expectError(
      await send(m, m.a, { content: 'dup', attachmentIds: [ids[1], ids[1]] }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('refuses the other side’s upload and another conversation’s upload', async () => {
    const m = await f.match();
    const other = await f.match();
    const bs = body<{ attachment: Attachment }>(
      await upload(m, m.b, form('b.png', 'image/png', png(1, 1))),
    ).attachment;
    const elsewhere = body<{ attachment: Attachment }>(
      await upload(other, other.a, form('o.png', 'image/png', png(1, 1))),
    ).attachment;
    expectError(await send(m, m.a, { attachmentIds: [bs.attachmentId] }), 400, 'VALIDATION_ERROR');
    expectError(await send(m, m.a, { attachmentIds: [elsewhere.attachmentId] }), 400, 'VALIDATION_ERROR');
  });

  it('delivers the attachments in relay_message and history; a recall deletes them (URL 404)', async () => {
    const m = await f.match();
    const doc = body<{ attachment: Attachment }>(
      await upload(m, m.a, form('notes.txt', 'text/plain', Buffer.from('hello\n'))),
    ).attachment;
    const msg = body<Message>(await send(m, m.a, { content: 'see file', attachmentIds: [doc.attachmentId] }));
    await waitFor(async () => (await f.envelopes(m.b.accountId)).length === 1, { what: 'relay_message' });
    const [env] = await f.envelopes(m.b.accountId);
    expect(JSON.stringify(env!.payload)).toBe(
      JSON.stringify({
        messageId: msg.id,
        content: 'see file',
        createdAt: (msg as unknown as { createdAt: string }).createdAt,
        attachments: [doc],
      }),
    );
    await waitFor(
      async () => {
        const h = await f.app.inject({
          method: 'GET',
          url: `/api/v1/conversations/${m.conversationId}/messages`,
          headers: m.b.headers,
        });
        return body<Message[]>(h).length === 1;
      },
      { what: 'b history' },
    );
    const h = await f.app.inject({
      method: 'GET',
      url: `/api/v1/conversations/${m.conversationId}/messages`,
      headers: m.b.headers,
    });
    expect(body<Message[]>(h)[0]!.attachments).toEqual([doc]);
    expect((await urlOf(m, m.b, doc.attachmentId)).statusCode).toBe(200);
    const del = await f.app.inject({
      method: 'DELETE',
      url: `/api/v1/conversations/${m.conversationId}/messages/${msg.id}`,
      headers: m.a.headers,
    });
    expect(del.statusCode).toBe(204);
    expectError(await urlOf(m, m.b, doc.attachmentId), 404, 'NOT_FOUND');
    expectError(await urlOf(m, m.a, doc.attachmentId), 404, 'NOT_FOUND');
  });
});

describe('GET /conversations/:id/attachments/:attachmentId/url', () => {
  it('signs a URL, valid 3600 s, that downloads the exact bytes with no credentials; OAN headers change nothing', async () => {
    const m = await f.match();
    const bytes = png(33, 44);
    const a = body<{ attachment: Attachment }>(
      await upload(m, m.a, form('pic.png', 'image/png', bytes)),
    ).attachment;
    await send(m, m.a, { attachmentIds: [a.attachmentId] });
    const res = await urlOf(m, m.b, a.attachmentId);
    expect(res.statusCode).toBe(200);
    const { url } = body<{ url: string }>(res);
    expect(Object.keys(body(res))).toEqual(['url']);
    expect(url.startsWith(f.listener.url)).toBe(true);
    const expires = Number(new URL(url).searchParams.get('exp'));
    expect(expires * 1000 - Date.now()).toBeGreaterThan(3590_000);
    expect(expires * 1000 - Date.now()).toBeLessThanOrEqual(3601_000);
    const plain = await fetch(url);
    expect(plain.status).toBe(200);
    expect(Buffer.from(await plain.arrayBuffer())).toEqual(bytes);
    const withAuth = await fetch(url, { headers: { authorization: 'Bearer gofers_not-a-key' } });
    expect(withAuth.status).toBe(200);
    expect(Buffer.from(await withAuth.arrayBuffer())).toEqual(bytes);
    // Altered: another object with the same signature is refused.
    const other = new URL(url);
    other.pathname = other.pathname.replace(a.attachmentId, randomUUID());
    expect((await fetch(other)).status).toBeGreaterThanOrEqual(400);
  });

  it('answers 404 for unknown, another conversation’s, and the other side’s unsent uploads; 403 for strangers', async () => {
    const m = await f.match();
    const other = await f.match();
    const mine = body<{ attachment: Attachment }>(
      await upload(other, other.a, form('o.png', 'image/png', png(1, 1))),
    ).attachment;
    const unsent = body<{ attachment: Attachment }>(
      await upload(m, m.a, form('u.png', 'image/png', png(1, 1))),
    ).attachment;
    expectError(await urlOf(m, m.a, randomUUID()), 404, 'NOT_FOUND');
    expectError(await urlOf(m, m.a, mine.attachmentId), 404, 'NOT_FOUND');
    expectError(await urlOf(m, m.b, unsent.attachmentId), 404, 'NOT_FOUND');
    expect((await urlOf(m, m.a, unsent.attachmentId)).statusCode).toBe(200);
    const third = await f.account();
    const a = await urlOf(m, third, unsent.attachmentId);
    const b = await urlOf({ conversationId: randomUUID() }, third, unsent.attachmentId);
    expectError(a, 403, 'FORBIDDEN');
    expect(a.body).toBe(b.body);
  });
});
