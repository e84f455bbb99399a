import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, REPO_ROOT, TestConnector, TestFleet, waitFor, type JoinedAccount } from '@oan/testing';
import { argvOf, corrupt, dumpTables } from './support.ts';

let fleet: TestFleet;
let owner: JoinedAccount;
let other: JoinedAccount;
let c: TestConnector;

beforeAll(async () => {
  // From the sources, as the image and `npm run dev` run them: every other file's fleet starts from
  // the e2e run's bundles (ADR 0048), so this file keeps the shipped form of each process under test.
  fleet = await TestFleet.start({ fromSources: true });
  owner = await joinAccount(fleet.url, fleet.mailbox, `owner-${fleet.id}@example.com`, 'dsh');
  other = await joinAccount(fleet.url, fleet.mailbox, `other-${fleet.id}@example.com`);
  c = new TestConnector({ baseUrl: fleet.url, token: owner.apiKey });
  await c.connect();
});
afterAll(async () => {
  c?.close();
  await fleet?.stop();
});

interface ChatItem {
  id: string;
  role: string;
  content: string;
  createdAt: string;
}
interface GoferItem {
  goferId: string;
  name: string;
  discoveryStatus: string;
}

const PNG_1X1 =
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5f1e2b20000000049454e44ae426082';

const ANSWERS = [
  'I want to hire a senior backend engineer for my team, remote, TypeScript and Postgres.',
  'We are a small fintech team building payment APIs; we offer a good salary and ownership.',
  'Honesty, fast feedback, remote-first work.',
  'Call you Hiring Scout.',
];

describe('a connector working with a Gofer', () => {
  let goferId = '';
  let chatId = '';

  it('creates a Gofer and gets the reply to an immediate post as gofer_message on the socket', async () => {
    const created = await c.rest<{ goferId: string; chatId: string; greeting: string }>('POST', '/gofers', {
      locale: 'en',
    });
    expect(created.status).toBe(201);
    ({ goferId, chatId } = created.body);
    expect(created.body.greeting.length).toBeGreaterThan(0);
    const posted = await c.rest('POST', `/gofers/${goferId}/chat/messages`, { content: ANSWERS[0] });
    expect(posted).toMatchObject({ status: 202, body: { accepted: true } });
    const reply = await waitFor(
      () =>
        c.delivered.find(
          (e) =>
            e.type === 'gofer_message' &&
            e.goferId === goferId &&
            e.payload.content !== created.body.greeting,
        ),
      { timeoutMs: 10_000, what: 'the reply on the socket' },
    );
    expect(reply).toMatchObject({
      source: 'own_gofer',
      chatId,
      reply: { method: 'POST', path: `/api/v1/gofers/${goferId}/chat/messages` },
    });
  });

  it('reads both messages back, with and without since (no system rows with since)', async () => {
    const all = await c.rest<ChatItem[]>('GET', `/gofers/${goferId}/chat/messages`);
    expect(all.status).toBe(200);
    expect(all.body.map((m) => m.role).slice(0, 3)).toEqual(['assistant', 'user', 'assistant']);
    expect(all.body[1]!.content).toBe(ANSWERS[0]);
    const since = await c.rest<ChatItem[]>(
      'GET',
      `/gofers/${goferId}/chat/messages?since=${encodeURIComponent(all.body[0]!.createdAt)}`,
    );
    expect(since.body.map((m) => m.id)).toEqual(
      all.body
        .slice(1)
        .filter((m) => m.role !== 'system')
        .map((m) => m.id),
    );
    const garbage = await c.rest<ChatItem[]>('GET', `/gofers/${goferId}/chat/messages?since=yesterday`);
    expect(garbage.body).toEqual(all.body);
  });

  it('answers the interview, answers gofer_questions through their reply path, and reaches ready_for_pairing', async () => {
    const answered = new Set<string>();
    for (let turn = 1; turn < 12; turn++) {
      const list = await c.rest<GoferItem[]>('GET', '/gofers');
      if (list.body.find((g) => g.goferId === goferId)?.discoveryStatus === 'ready_for_pairing') break;
      const question = c.delivered.find(
        (e) => e.type === 'gofer_question' && e.goferId === goferId && !answered.has(e.eventId),
      );
      const before = c.delivered.length;
      if (question && answered.size === 0) await expectLateJoinerSeesOnlyTheDigest(question);
      if (question) {
        const digest = await c.rest<{
          events: OanEventEnvelope[];
          summary: { pendingQuestions: number; goferCount: number };
        }>('GET', '/events/unresolved');
        expect(digest.body.events.map((e) => e.eventId)).toContain(question.eventId);
        expect(digest.body.summary).toMatchObject({
          pendingQuestions: digest.body.events.length,
          goferCount: 1,
        });
        expect(digest.body.events.find((e) => e.eventId === question.eventId)).toEqual(question);
        answered.add(question.eventId);
        const path = question.reply!.path.replace(/^\/api\/v1/, '');
        expect((await c.rest('POST', path, { content: 'yes' })).status).toBe(202);
      } else {
        expect(
          (
            await c.rest('POST', `/gofers/${goferId}/chat/messages`, {
              content: ANSWERS[Math.min(turn, ANSWERS.length - 1)],
            })
          ).status,
        ).toBe(202);
      }
      await waitFor(() => c.delivered.length > before, {
        timeoutMs: 10_000,
        what: `the Gofer's turn ${turn}`,
      });
    }
    const list = await c.rest<GoferItem[]>('GET', '/gofers');
    expect(list.body.find((g) => g.goferId === goferId)).toMatchObject({
      discoveryStatus: 'ready_for_pairing',
    });
    expect(answered.size).toBeGreaterThan(0);
    const digest = await c.rest<{ events: OanEventEnvelope[]; summary: { pendingQuestions: number } }>(
      'GET',
      '/events/unresolved',
    );
    expect(digest.body.events.filter((e) => answered.has(e.eventId))).toEqual([]);
  });

  /**
   * A connector with no stored cursor, joining an account with history, starts
   * at /events/cursor: nothing of the past is replayed to it; the open question reaches it only
   * through /events/unresolved, as the envelope first delivered.
   */
  async function expectLateJoinerSeesOnlyTheDigest(question: OanEventEnvelope) {
    await c.idle();
    const late = new TestConnector({ baseUrl: fleet.url, token: owner.apiKey });
    try {
      await late.connect();
      expect(late.cursor).toBe(BigInt(c.delivered.at(-1)!.seq));
      expect(late.delivered).toEqual([]);
      const digest = await late.rest<{ events: OanEventEnvelope[] }>('GET', '/events/unresolved');
      expect(digest.body.events.find((e) => e.eventId === question.eventId)).toEqual(question);
      expect(late.delivered).toEqual([]);
    } finally {
      late.close();
    }
  }

  it('gives another account the same probe-safe 403 as an unknown id on every Gofer route', async () => {
    const stranger = new TestConnector({ baseUrl: fleet.url, token: other.apiKey });
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, body] of [
      ['POST', '/chat/messages', { content: 'hi' }],
      ['GET', '/chat/messages', undefined],
    ] as const) {
      const mine = await stranger.rest(method, `/gofers/${goferId}${path}`, body);
      const none = await stranger.rest(method, `/gofers/${unknown}${path}`, body);
      expect(mine.status, `${method} ${path}`).toBe(403);
      expect(mine.text).toBe(none.text);
    }
    // The uploads too (403 for foreign and unknown alike), through the edge, with an acceptable file.
    for (const [what, file, name] of [
      ['attachments', new Blob(['hello'], { type: 'text/plain' }), 'a.txt'],
      ['photos', new Blob([Buffer.from(PNG_1X1, 'hex')], { type: 'image/png' }), 'a.png'],
    ] as const) {
      const send = async (id: string, retried = false): Promise<{ status: number; text: string }> => {
        const form = new FormData();
        form.append('file', file, name);
        try {
          const res = await fetch(`${fleet.url}/api/v1/gofers/${id}/${what}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${other.apiKey}` },
            body: form,
          });
          return { status: res.status, text: await res.text() };
        } catch (err) {
          // The 403 may come before the body is sent; once in a clean-clone run the connection was
          // closed under the client's write (EPIPE) before it read that answer. Sent again once.
          const code = ((err as Error).cause as { code?: string } | undefined)?.code;
          if (retried || (code !== 'EPIPE' && code !== 'ECONNRESET')) throw err;
          return send(id, true);
        }
      };
      const mine = await send(goferId);
      expect(mine.status, what).toBe(403);
      expect(mine.text).toBe((await send(unknown)).text);
      expect(mine.text).toBe(
        (await stranger.rest('POST', `/gofers/${goferId}/chat/messages`, { content: 'hi' })).text,
      );
    }
    const del = await stranger.rest('DELETE', `/gofers/${goferId}`);
    expect(del.status).toBe(403);
    expect((await stranger.rest('DELETE', `/gofers/${unknown}`)).status).toBe(404);
  });

  it('uploads a document through the edge; its signed URL needs no credentials; it is parsed', async () => {
    const text = 'Our team ships payment APIs.\nWe pair on Fridays.\n';
    const form = new FormData();
    form.append('file', new Blob([text], { type: 'text/plain' }), 'about-us.txt');
    const res = await fetch(`${fleet.url}/api/v1/gofers/${goferId}/attachments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.apiKey}` },
      body: form,
    });
    expect(res.status).toBe(201);
    const up = (await res.json()) as {
      attachment: { id: string; url: string; size: number; ragStatus: string };
      ragStatus: string;
    };
    expect(up.attachment).toMatchObject({ size: Buffer.byteLength(text), ragStatus: 'processing' });
    const download = await fetch(up.attachment.url);
    expect(download.status).toBe(200);
    expect(await download.text()).toBe(text);
    const photo = new FormData();
    photo.append('file', new Blob([text], { type: 'text/plain' }), 'not-a-photo.txt');
    const refused = await fetch(`${fleet.url}/api/v1/gofers/${goferId}/photos`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.apiKey}` },
      body: photo,
    });
    expect(refused.status).toBe(415);
    expect(await refused.json()).toMatchObject({ error: 'UNSUPPORTED_MIME' });
    expect(
      (await c.rest('POST', `/gofers/${goferId}/chat/messages`, { attachmentIds: [up.attachment.id] }))
        .status,
    ).toBe(202);
    const withDoc = await waitFor(
      async () => {
        const page = await c.rest<(ChatItem & { attachments?: { id: string; ragStatus?: string }[] })[]>(
          'GET',
          `/gofers/${goferId}/chat/messages`,
        );
        const m = page.body.find((x) => x.attachments?.some((a) => a.id === up.attachment.id));
        return m?.attachments?.[0]?.ragStatus === 'ready' ? m : undefined;
      },
      { what: 'the parsed document on its message' },
    );
    expect(withDoc.role).toBe('user');
  });

  it('replaying the topics rebuilds the same Gofer list and chat history', async () => {
    const tables = ['read.gofers', 'read.gofer_messages', 'read.gofer_attachments'];
    // Quiesce first: the brain answers every owner message (the last one carried the document), and a
    // turn appended after the "before" dump would rightly be in the rebuilt tables.
    await waitFor(
      async () => {
        const page = await c.rest<ChatItem[]>('GET', `/gofers/${goferId}/chat/messages`);
        const last = page.body[page.body.length - 1];
        return last?.role === 'assistant';
      },
      { what: 'the brain to answer the last owner message' },
    );
    const before = await dumpTables(fleet.env.DATABASE_URL!, tables);
    await fleet.kill('projector');
    // A rebuild, not a re-apply onto the old rows: damage that only a rebuild repairs.
    await corrupt(fleet.env.DATABASE_URL!, [
      `update read.gofers set name = 'corrupted'`,
      `update read.gofer_messages set content = 'corrupted'`,
      `update read.gofer_attachments set rag_status = 'failed'`,
      `insert into read.gofers select 'stale-' || id, account_id, chat_id, name, description, locale,
         source_platform, discovery_status, human_review_triggers, "values", demands, created_at,
         updated_at, deleted_at from read.gofers`,
    ]);
    execFileSync(process.execPath, ['services/projector/src/replay.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fleet.env },
      stdio: 'pipe',
    });
    expect(await dumpTables(fleet.env.DATABASE_URL!, tables)).toEqual(before);
    await fleet.restart('projector');
  });

  it('deletes the Gofer, which is gone from GET /gofers in the very next request', async () => {
    const del = await c.rest('DELETE', `/gofers/${goferId}`);
    expect(del).toMatchObject({ status: 200, body: { deleted: true, goferId } });
    const list = await c.rest<GoferItem[]>('GET', '/gofers');
    expect(list.body.map((g) => g.goferId)).not.toContain(goferId);
    const digest = await c.rest<{ summary: { pendingQuestions: number } }>('GET', '/events/unresolved');
    expect(digest.body.summary.pendingQuestions).toBe(0);
  });
});

describe('read-your-writes on the event stream (ADR 0009)', () => {
  it('the envelope of a command is in GET /events and behind GET /events/cursor as soon as the command returns', async () => {
    const before = await c.rest<{ seq: string }>('GET', '/events/cursor');
    const created = await c.rest<{ goferId: string; greeting: string }>('POST', '/gofers', { locale: 'en' });
    expect(created.status).toBe(201);
    // No wait, no retry: the very next requests.
    const page = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${before.body.seq}&limit=200`);
    const greeting = page.body.find((e) => e.type === 'gofer_message' && e.goferId === created.body.goferId);
    expect(greeting?.payload.content).toBe(created.body.greeting);
    const cursor = await c.rest<{ seq: string }>('GET', '/events/cursor');
    expect(BigInt(cursor.body.seq)).toBeGreaterThanOrEqual(BigInt(greeting!.seq));
    expect((await c.rest('DELETE', `/gofers/${created.body.goferId}`)).status).toBe(200);
  });
});

describe('the form the processes run in (ADR 0048)', () => {
  it("every process of this file's fleet runs its source, as the image runs it", () => {
    for (const p of fleet.running.values()) {
      expect(argvOf(p.child.pid!), p.spec.name).toContain(
        join(REPO_ROOT, 'services', p.spec.kind, 'src/main.ts'),
      );
    }
  });
});
