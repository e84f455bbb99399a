import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { TestFleet, waitFor } from '@oan/testing';
import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '@oan/testing';
import { corrupt, dumpTables, matchTwoAccounts, type Match } from './support.ts';

type Digest = {
  events: OanEventEnvelope[];
  summary: { pendingQuestions: number; goferCount: number; decisions: number };
};
const state: { match?: Match } = {};

let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start();
});
afterAll(async () => {
  state.match?.ca.close();
  state.match?.cb.close();
  await fleet?.stop();
});

describe('two accounts whose Gofers need each other', () => {
  it(
    'are discovered, paired, run a session, get summary cards, and end in one match',
    { timeout: 180_000 },
    async () => {
      let request: OanEventEnvelope | undefined;
      state.match = await matchTwoAccounts(fleet, ['team', 'eng'], {
        // Discovery pairs them without any manual step; each side gets pair_proposed once, with a reply.
        async proposed({ ca, cb }, pa, pb) {
          expect(pa.threadId).toBe(pb.threadId);
          expect(pa.reply?.path).toBe(`/api/v1/threads/${pa.threadId}/pair/confirm`);
          expect(pa.payload).toEqual({
            counterpartRoleName: expect.any(String),
            counterpartSourcePlatform: 'openclaw',
          });
          expect(pb.payload).toMatchObject({ counterpartSourcePlatform: 'dsh' });
          // Until confirmed, each side finds its pairing in the unresolved digest as a decision.
          for (const [c, env] of [
            [ca, pa],
            [cb, pb],
          ] as const) {
            const digest = await c.rest<Digest>('GET', '/events/unresolved');
            expect(digest.body.events).toContainEqual(env);
            expect(digest.body.summary.decisions).toBe(1);
          }
        },

        async confirmed({ ca, ga, threadId }, answers) {
          for (const res of answers) expect(res.status).toBe(200);
          const again = await ca.rest<{ error: string }>('POST', `/threads/${threadId}/pair/confirm`, {
            roleId: ga,
            accepted: true,
          });
          expect(again.status).toBe(400);
          expect(again.body.error).toContain('Thread is not waiting for confirmation');
        },

        // The session runs; both sides get a summary card with both asset arrays present.
        async summarized({ ca, ga, threadId }, sa, sb) {
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
        },

        // A asks for the match; B decides through the envelope's reply path.
        async requested({ b, cb, threadId }, req, mr) {
          expect(req).toMatchObject({ status: 201, body: { status: 'outgoing_pending' } });
          // The ids a counterpart sees are keyed by ID_SECRET (UUIDv8), not the UUIDv5 of an email
          // or of two goferIds that anyone could recompute (ADR 0029).
          const keyed = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
          expect(req.body.counterpart.id).toBe(b.userId);
          expect(b.userId).toMatch(keyed);
          expect(threadId).toMatch(keyed);
          const open = await cb.rest<Digest>('GET', '/events/unresolved');
          expect(open.body.events).toEqual([mr]);
          expect(open.body.summary.decisions).toBe(1);
          expect(mr.reply?.path).toBe(`/api/v1/match-requests/${String(mr.payload.requestId)}/decision`);
          request = mr;
        },

        // B's own decision is out of B's digest at once, not once the projector has caught up.
        async answered({ cb }) {
          const digest = await cb.rest<Digest>('GET', '/events/unresolved');
          expect(digest.body.summary.decisions).toBe(0);
          expect(digest.body.events).toEqual([]);
        },

        // Both learn one conversation.
        async decided({ cb }, decision, da, db) {
          expect(decision.status).toBe(200);
          expect(da.payload).toMatchObject({
            status: 'accepted',
            conversationId: decision.body.conversationId,
          });
          expect(db.payload.conversationId).toBe(decision.body.conversationId);
          const twice = await cb.rest('POST', request!.reply!.path.replace(/^\/api\/v1/, ''), {
            accept: true,
          });
          expect(twice.status).toBe(400);
          expect((await cb.rest<Digest>('GET', '/events/unresolved')).body.summary.decisions).toBe(0);
        },
      });
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
    execFileSync(process.execPath, ['services/projector/src/replay.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fleet.env },
      stdio: 'pipe',
    });
    expect(await dumpTables(fleet.env.DATABASE_URL!, tables)).toEqual(before);
    await fleet.restart('projector');
  });

  it('when one side deletes its Gofer, the other side reads the thread as closed', async () => {
    const { ca, cb, ga, threadId } = state.match!;
    expect((await ca.rest('DELETE', `/gofers/${ga}`)).status).toBe(200);
    await waitFor(
      async () => (await cb.rest<{ status: string }>('GET', `/threads/${threadId}`)).body.status === 'closed',
      { timeoutMs: 20_000, what: 'the thread to read as closed' },
    );
  });
});
