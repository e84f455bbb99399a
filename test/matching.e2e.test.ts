import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '@oan/testing';
import { corrupt, dumpTables, interviewToReady } from './support';

type Digest = {
  events: OanEventEnvelope[];
  summary: { pendingQuestions: number; goferCount: number; decisions: number };
};
const state: { threadId?: string; ga?: string; cb?: TestConnector } = {};

let fleet: TestFleet;
const connectors: TestConnector[] = [];
beforeAll(async () => {
  fleet = await TestFleet.start();
});
afterAll(async () => {
  for (const c of connectors) c.close();
  await fleet?.stop();
});

const find = (c: TestConnector, type: string, goferId: string) =>
  waitFor(() => c.delivered.find((e: OanEventEnvelope) => e.type === type && e.goferId === goferId), {
    timeoutMs: 30_000,
    what: `${type} for ${goferId}`,
  });

describe('two accounts whose Gofers need each other (issue 4)', () => {
  it(
    'are discovered, paired, run a session, get summary cards, and end in one match',
    { timeout: 180_000 },
    async () => {
      const [a, b] = await Promise.all([
        joinAccount(fleet.url, fleet.mailbox, `team-${fleet.id}@example.com`, 'dsh'),
        joinAccount(fleet.url, fleet.mailbox, `eng-${fleet.id}@example.com`, 'openclaw'),
      ]);
      const [ca, cb] = [
        new TestConnector({ baseUrl: fleet.url, token: a.apiKey }),
        new TestConnector({ baseUrl: fleet.url, token: b.apiKey }),
      ];
      connectors.push(ca, cb);
      await Promise.all([ca.connect(), cb.connect()]);
      const ga = (await ca.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body.goferId;
      const gb = (await cb.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body.goferId;
      await Promise.all([
        interviewToReady(ca, ga, [
          'We are hiring a backend engineer: remote, TypeScript, Postgres, Kafka.',
          'We are a fintech team building payment APIs, fully remote, offering equity and mentoring.',
          'Ownership, honesty, remote-first collaboration.',
          'Call you Team Scout.',
        ]),
        interviewToReady(cb, gb, [
          'I am looking for a remote backend engineering role with TypeScript and Postgres at a fintech team.',
          'I am a backend engineer with eight years of TypeScript, Postgres and Kafka building payment APIs.',
          'Remote work, ownership, honest feedback.',
          'Call you Career Scout.',
        ]),
      ]);

      // Discovery pairs them without any manual step; each side gets pair_proposed once, with a reply.
      const pa = await find(ca, 'pair_proposed', ga);
      const pb = await find(cb, 'pair_proposed', gb);
      expect(pa.threadId).toBe(pb.threadId);
      expect(pa.reply?.path).toBe(`/api/v1/threads/${pa.threadId}/pair/confirm`);
      expect(pa.payload).toEqual({
        counterpartRoleName: expect.any(String),
        counterpartSourcePlatform: 'openclaw',
      });
      expect(pb.payload).toMatchObject({ counterpartSourcePlatform: 'dsh' });
      const threadId = pa.threadId!;
      // Until confirmed, each side finds its pairing in the unresolved digest as a decision.
      for (const [c, env] of [
        [ca, pa],
        [cb, pb],
      ] as const) {
        const digest = await c.rest<Digest>('GET', '/events/unresolved');
        expect(digest.body.events).toContainEqual(env);
        expect(digest.body.summary.decisions).toBe(1);
      }

      for (const [c, g] of [
        [ca, ga],
        [cb, gb],
      ] as const) {
        const res = await c.rest('POST', `/threads/${threadId}/pair/confirm`, { roleId: g, accepted: true });
        expect(res.status).toBe(200);
      }
      const again = await ca.rest<{ error: string }>('POST', `/threads/${threadId}/pair/confirm`, {
        roleId: ga,
        accepted: true,
      });
      expect(again.status).toBe(400);
      expect(again.body.error).toContain('Thread is not waiting for confirmation');

      // The session runs; both sides get a summary card with both asset arrays present.
      const sa = await find(ca, 'session_summary', ga);
      const sb = await find(cb, 'session_summary', gb);
      for (const s of [sa, sb]) {
        expect(s).toMatchObject({ source: 'platform', threadId });
        expect(Array.isArray(s.payload.photos) && Array.isArray(s.payload.documents)).toBe(true);
        expect(s.payload.threadId).toBe(threadId);
      }
      // The card is on the Gofer face too, and the pairing is announced in the role-chat.
      const cards = await ca.rest<{
        items: { threadId: string; dynamicStatus: string; cardTitle: string | null }[];
      }>('GET', `/gofers/${ga}/pairings`);
      expect(cards.body.items).toHaveLength(1);
      expect(cards.body.items[0]).toMatchObject({ threadId });
      expect(cards.body.items[0]!.dynamicStatus).not.toBe('pending');
      expect((await ca.rest('GET', `/gofers/${ga}/pairings/${threadId}`)).status).toBe(200);
      const chat = await ca.rest<{ role: string; kind?: string; pairing?: { threadId: string } }[]>(
        'GET',
        `/gofers/${ga}/chat/messages`,
      );
      expect(chat.body.find((m) => m.kind === 'pairing')).toMatchObject({
        role: 'system',
        pairing: { threadId },
      });
      const transcript = await ca.rest<unknown[]>('GET', `/threads/${threadId}/messages`);
      expect(transcript.status).toBe(200);
      expect(transcript.body.length).toBeGreaterThan(0);

      // A asks for the match; B decides through the envelope's reply path; both learn one conversation.
      const req = await ca.rest<{ status: string }>('POST', '/match-requests', { threadId, roleId: ga });
      expect(req).toMatchObject({ status: 201, body: { status: 'outgoing_pending' } });
      const mr = await find(cb, 'match_request', gb);
      const open = await cb.rest<Digest>('GET', '/events/unresolved');
      expect(open.body.events).toEqual([mr]);
      expect(open.body.summary.decisions).toBe(1);
      expect(mr.reply?.path).toBe(`/api/v1/match-requests/${String(mr.payload.requestId)}/decision`);
      const decision = await cb.rest<{ conversationId: string }>(
        'POST',
        mr.reply!.path.replace(/^\/api\/v1/, ''),
        { accept: true },
      );
      expect(decision.status).toBe(200);
      const da = await find(ca, 'match_decided', ga);
      const db = await find(cb, 'match_decided', gb);
      expect(da.payload).toMatchObject({ status: 'accepted', conversationId: decision.body.conversationId });
      expect(db.payload.conversationId).toBe(decision.body.conversationId);
      const twice = await cb.rest('POST', mr.reply!.path.replace(/^\/api\/v1/, ''), { accept: true });
      expect(twice.status).toBe(400);
      expect((await cb.rest<Digest>('GET', '/events/unresolved')).body.summary.decisions).toBe(0);
      state.threadId = threadId;
      state.ga = ga;
      state.cb = cb;
    },
  );

  it('replaying the topics rebuilds the same threads, cards and match states', async () => {
    const tables = ['read.threads', 'read.thread_messages', 'read.pairing_cards', 'read.match_requests'];
    const before = await dumpTables(fleet.env.DATABASE_URL!, tables);
    expect(before['read.pairing_cards']!.length).toBe(2);
    await fleet.kill('projector');
    await corrupt(fleet.env.DATABASE_URL!, [
      `update read.threads set status = 'corrupted'`,
      `delete from read.match_requests`,
    ]);
    execFileSync(process.execPath, ['--import', 'tsx', 'services/projector/src/replay.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fleet.env },
      stdio: 'pipe',
    });
    expect(await dumpTables(fleet.env.DATABASE_URL!, tables)).toEqual(before);
    await fleet.restart('projector');
  });

  it('when one side deletes its Gofer, the other side reads the thread as closed', async () => {
    expect((await connectors[0]!.rest('DELETE', `/gofers/${state.ga}`)).status).toBe(200);
    await waitFor(
      async () =>
        (await state.cb!.rest<{ status: string }>('GET', `/threads/${state.threadId}`)).body.status ===
        'closed',
      { timeoutMs: 20_000, what: 'the thread to read as closed' },
    );
  });
});
