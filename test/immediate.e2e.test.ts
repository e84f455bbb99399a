import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestFleet } from '@oan/testing';
import { matchTwoAccounts, type Answer } from './support';

/**
 * Issue 12, point 1: an answer holds the moment it is given, across services. A match decision
 * answers `{ok, conversationId}`; a connector may post its first message (or read the history) right
 * away, before the conversations service has heard of the conversation. Here the outbox relay is
 * paused (SIGSTOP) from before the decision until a second after its answer, so neither the opener
 * reactor nor the projector can know of the match when the follow-ups arrive: they must wait (bounded,
 * ADR 0009) for the decider's own matching write, never answer 403.
 */
let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start();
});
afterAll(async () => {
  await fleet?.stop();
});

describe('right after a match decision', () => {
  it('the decider’s first message and history read succeed, even while the log is held back', async () => {
    const relay = fleet.running.get('relay')!.child;
    const followUps: Promise<[Answer, Answer]>[] = [];
    let resumeAt = 0;
    const m = await matchTwoAccounts(fleet, ['now-a', 'now-b'], {
      requested: async () => {
        relay.kill('SIGSTOP');
      },
      answered: async (match, decision) => {
        expect(decision.status).toBe(200);
        const path = `/conversations/${match.conversationId}`;
        // Sent at once, while nothing downstream of the decision's append has run.
        followUps.push(
          Promise.all([
            match.cb.rest('POST', `${path}/messages`, { content: 'hello, right after accepting' }),
            match.cb.rest('GET', `${path}/messages`),
          ]),
        );
        await new Promise((r) => setTimeout(r, 1000));
        resumeAt = Date.now();
        relay.kill('SIGCONT');
      },
    });
    try {
      const [sent, read] = await followUps[0]!;
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      expect(read.status, JSON.stringify(read.body)).toBe(200);
      // They waited for the log, and answered once it moved (not at the 5 s bound).
      expect(Date.now() - resumeAt).toBeLessThan(10_000);
      const history = await m.ca.rest<{ content: string }[]>(
        'GET',
        `/conversations/${m.conversationId}/messages`,
      );
      expect(history.body.map((x) => x.content)).toEqual(['hello, right after accepting']);
    } finally {
      relay.kill('SIGCONT');
      m.ca.close();
      m.cb.close();
    }
  });
});
