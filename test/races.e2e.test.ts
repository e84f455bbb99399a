import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { form, png, TestFleet, waitFor } from '@oan/testing';
import { matchTwoAccounts, type Answer, type Match } from './support.ts';

/**
 * An answer holds the moment it is given, as a connector lives it: every follow-up is sent the
 * instant the answer it depends on arrives, round after round through the edge, while the projector
 * and the reactors work behind. None of them may answer 403, 404 or a body that misses the write
 * just answered. (The deterministic versions, with the log held back, are in immediate.e2e.test.ts.)
 */
const ROUNDS = 12;

let fleet: TestFleet;
let m: Match;
beforeAll(async () => {
  fleet = await TestFleet.start();
  m = await matchTwoAccounts(fleet, ['race-a', 'race-b']);
}, 120_000);
afterAll(async () => {
  m?.ca.close();
  m?.cb.close();
  await fleet?.stop();
});

interface ChatItem {
  id: string;
  role: string;
  content: string;
  attachments?: { id: string }[];
}

/** A multipart upload through the edge, as a connector sends it. */
async function upload(apiKey: string, path: string, file: ReturnType<typeof form>): Promise<Answer> {
  const res = await fetch(`${fleet.url}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, ...file.headers },
    body: file.payload,
  });
  const text = await res.text();
  return { status: res.status, text, body: (text ? JSON.parse(text) : undefined) as unknown };
}

const ok = <T>(res: Answer<T>, status: number, what: string): T => {
  expect(res.status, `${what}: ${res.text}`).toBe(status);
  return res.body;
};

describe('a follow-up sent the instant its answer arrives', () => {
  it('a Gofer is listed and greets once created, shows each message and file, and is gone once deleted', async () => {
    const c = m.ca;
    for (let i = 0; i < ROUNDS; i++) {
      const created = ok(
        await c.rest<{ goferId: string; greeting: string }>('POST', '/gofers', { locale: 'en' }),
        201,
        'create',
      );
      const g = created.goferId;
      const [list, greeted] = await Promise.all([
        c.rest<{ goferId: string }[]>('GET', '/gofers'),
        c.rest<ChatItem[]>('GET', `/gofers/${g}/chat/messages`),
      ]);
      expect(ok(list, 200, 'list').map((x) => x.goferId)).toContain(g);
      expect(ok(greeted, 200, 'chat').map((x) => x.content)).toEqual([created.greeting]);

      ok(await c.rest('POST', `/gofers/${g}/chat/messages`, { content: `round ${i}` }), 202, 'say');
      const said = ok(await c.rest<ChatItem[]>('GET', `/gofers/${g}/chat/messages`), 200, 'chat');
      expect(said.filter((x) => x.role === 'user').map((x) => x.content)).toEqual([`round ${i}`]);

      const photo = ok(
        await upload(m.a.apiKey, `/gofers/${g}/photos`, form(`p${i}.png`, 'image/png', png(2 + i, 2))),
        201,
        'photo',
      ) as { photo: { id: string } };
      ok(
        await c.rest('POST', `/gofers/${g}/chat/messages`, { attachmentIds: [photo.photo.id] }),
        202,
        'share the photo',
      );
      const shared = ok(await c.rest<ChatItem[]>('GET', `/gofers/${g}/chat/messages`), 200, 'chat');
      expect(shared.flatMap((x) => x.attachments ?? []).map((a) => a.id)).toEqual([photo.photo.id]);

      ok(await c.rest('DELETE', `/gofers/${g}`), 200, 'delete');
      const [after, gone] = await Promise.all([
        c.rest<{ goferId: string }[]>('GET', '/gofers'),
        c.rest('GET', `/gofers/${g}/chat/messages`),
      ]);
      expect(ok(after, 200, 'list').map((x) => x.goferId)).not.toContain(g);
      // Every /gofers/:goferId/* route but DELETE answers a Gofer that is not the caller's active
      // one with the uniform 403: never the deleted Gofer's chat.
      expect(gone.status, gone.text).toBe(403);
      expect(gone.text).toBe('{"error":"Forbidden","code":"FORBIDDEN"}');
    }
  });

  it('a conversation message, a file and a recall are in the sender’s history at once and in the recipient’s on its envelope', async () => {
    const path = `/conversations/${m.conversationId}`;
    const history = async (c: typeof m.ca) =>
      ok(await c.rest<{ id: string }[]>('GET', `${path}/messages`), 200, 'history').map((x) => x.id);
    for (let i = 0; i < ROUNDS; i++) {
      const file = ok(
        await upload(
          m.b.apiKey,
          `${path}/attachments`,
          form(`f${i}.txt`, 'text/plain', Buffer.from(`n${i}`)),
        ),
        201,
        'upload',
      ) as { attachment: { attachmentId: string } };
      const id = file.attachment.attachmentId;
      const [url, sent] = await Promise.all([
        m.cb.rest('GET', `${path}/attachments/${id}/url`),
        m.cb.rest<{ id: string }>('POST', `${path}/messages`, { content: `round ${i}`, attachmentIds: [id] }),
      ]);
      ok(url, 200, 'url');
      const messageId = ok(sent, 201, 'send').id;
      expect(await history(m.cb)).toContain(messageId);

      // The recipient acts on the envelope: the message and its file are there for it.
      await waitFor(
        () =>
          m.ca.delivered.find(
            (e: OanEventEnvelope) => e.type === 'relay_message' && e.payload.messageId === messageId,
          ),
        { what: `relay_message ${messageId}` },
      );
      expect(await history(m.ca)).toContain(messageId);
      ok(await m.ca.rest('GET', `${path}/attachments/${id}/url`), 200, 'recipient url');

      ok(await m.cb.rest('DELETE', `${path}/messages/${messageId}`), 204, 'recall');
      expect(await history(m.cb)).not.toContain(messageId);
    }
  });
});
