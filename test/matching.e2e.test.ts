import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, TestConnector, TestFleet, waitFor } from '@oan/testing';
import { interviewToReady } from './support';

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
      const transcript = await ca.rest<unknown[]>('GET', `/threads/${threadId}/messages`);
      expect(transcript.status).toBe(200);
      expect(transcript.body.length).toBeGreaterThan(0);

      // A asks for the match; B decides through the envelope's reply path; both learn one conversation.
      const req = await ca.rest<{ status: string }>('POST', '/match-requests', { threadId, roleId: ga });
      expect(req).toMatchObject({ status: 201, body: { status: 'outgoing_pending' } });
      const mr = await find(cb, 'match_request', gb);
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
    },
  );
});
