import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, png, TestFleet } from '@oan/testing';
import { matchTwoAccounts, type Answer } from './support.ts';

/**
 * An answer holds the moment it is given, across services. A connector acts on a
 * 200 at once: it reads its pairing card right after confirming (the gofers service serves the
 * matching context's read model), and posts its first message right after accepting a match (the
 * conversations service has not heard of the conversation yet). Here the outbox publisher is paused
 * (SIGSTOP) from before each command until a second after its answer, so nothing downstream of the
 * append (the projector, the reactors) can have run when the follow-ups arrive: they must wait
 * (bounded, ADR 0009) for the caller's own matching write, never answer 403 or a stale body.
 */
type Cards = { items: { threadId: string; pairingStatus: string }[] };

describe('right after a command of the matching context, held back on its way through the log', () => {
  let fleet: TestFleet;
  beforeAll(async () => {
    fleet = await TestFleet.start();
  });
  afterAll(async () => {
    await fleet?.stop();
  });

  it('the confirming side’s card shows the activated thread, and the decider’s first message and read succeed', async () => {
    const outbox = fleet.running.get('outbox')!.child;
    const held = async () => {
      await new Promise((r) => setTimeout(r, 1000));
      outbox.kill('SIGCONT');
    };
    let card: Promise<Answer<Cards>> | undefined;
    let followUps: Promise<[Answer, Answer]> | undefined;
    let resumedAt = 0;
    try {
      const m = await matchTwoAccounts(fleet, ['now-a', 'now-b'], {
        proposed: async () => {
          outbox.kill('SIGSTOP');
        },
        confirmed: async (p, answers) => {
          answers.forEach((a) => expect(a.status).toBe(200));
          // b's confirm was the second: it activated the thread. b reads its card at once.
          card = p.cb.rest<Cards>('GET', `/gofers/${p.gb}/pairings`);
          await held();
        },
        requested: async () => {
          outbox.kill('SIGSTOP');
        },
        answered: async (match, decision) => {
          expect(decision.status).toBe(200);
          const path = `/conversations/${match.conversationId}`;
          followUps = Promise.all([
            match.cb.rest('POST', `${path}/messages`, { content: 'hello, right after accepting' }),
            match.cb.rest('GET', `${path}/messages`),
          ]);
          await held();
          resumedAt = Date.now();
        },
      });
      try {
        const cards = await card!;
        expect(cards.status).toBe(200);
        const mine = cards.body.items.find((c) => c.threadId === m.threadId);
        expect(mine?.pairingStatus).not.toBe('awaiting_confirmation');

        const [sent, read] = await followUps!;
        expect(sent.status, JSON.stringify(sent.body)).toBe(201);
        expect(read.status, JSON.stringify(read.body)).toBe(200);
        // They waited for the log and answered once it moved, not at the 5 s bound.
        expect(Date.now() - resumedAt).toBeLessThan(4000);
        const history = await m.cb.rest<{ content: string }[]>(
          'GET',
          `/conversations/${m.conversationId}/messages`,
        );
        expect(history.body.map((x) => x.content)).toEqual(['hello, right after accepting']);
      } finally {
        m.ca.close();
        m.cb.close();
      }
    } finally {
      outbox.kill('SIGCONT');
    }
  });
});

/**
 * A fleet of its own: the Gofers of another match in the same fleet give the same interview answers,
 * so discovery could pair across the two matches and the confirms would land on the wrong thread.
 */
describe('right after an upload, with the read models held back', () => {
  let own: TestFleet;
  beforeAll(async () => {
    own = await TestFleet.start();
  });
  afterAll(async () => {
    await own?.stop();
  });

  it('a photo uploaded just before the pairing is confirmed is on the fresh summary card, and its URL answers at once', async () => {
    const projector = own.running.get('projector')!.child;
    let photoId = '';
    let url: Answer | undefined;
    try {
      const m = await matchTwoAccounts(own, ['card-a', 'card-b'], {
        proposed: async (p) => {
          // The gofers read model the session reads its files from is held back from here on.
          projector.kill('SIGSTOP');
          const upload = form('cover.png', 'image/png', png(3, 2));
          const res = await fetch(`${own.url}/api/v1/gofers/${p.gb}/photos`, {
            method: 'POST',
            headers: { authorization: `Bearer ${p.b.apiKey}`, ...upload.headers },
            body: upload.payload,
          });
          const text = await res.text();
          expect(res.status, text).toBe(201);
          photoId = (JSON.parse(text) as { photo: { id: string } }).photo.id;
        },
        confirmed: async () => {
          await new Promise((r) => setTimeout(r, 1000));
          projector.kill('SIGCONT');
        },
        summarized: async (p, sa) => {
          const photos = sa.payload.photos as { attachmentId: string }[];
          expect(photos.map((x) => x.attachmentId)).toEqual([photoId]);
          url = await p.ca.rest('GET', `/threads/${p.threadId}/counterpart-attachments/${photoId}/url`);
        },
      });
      m.ca.close();
      m.cb.close();
      expect(url?.status, JSON.stringify(url?.body)).toBe(200);
    } finally {
      projector.kill('SIGCONT');
    }
  });
});
