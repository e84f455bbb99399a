import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, TestConnector, TestFleet, waitFor, type JoinedAccount } from '@oan/testing';
import { expectReplayRebuilds } from './faults/scenario.ts';
import {
  assignedTo,
  heldBatches,
  loggedSince,
  partitionsByKey,
  projectorCounter,
  type HeldBatch,
} from './projectorMembers.ts';
import { socketSessions } from './replicaTraffic.ts';

/**
 * The projector over four partitions per topic (KAFKA_TOPIC_PARTITIONS=4), its two replicas
 * splitting them while a dozen accounts chat with their Gofers: the second replica joins
 * mid-stream, is killed -9 while it holds a batch inside its transaction, comes back and is paused
 * (SIGSTOP) with a batch in hand until the group gives its partitions to the other one, then goes on.
 * Each account's seq stays dense and in the order of its events, no envelope is stored or pushed
 * twice, and a replay rebuilds the same tables. Stage 2 skips an eventId it stored already before it
 * takes a seq, so a stale batch that committed would still double nothing there: the paused member's
 * refusal is checked on its own, for the very batch it held.
 */
const ACCOUNTS = 12;
let fleet: TestFleet;
let db: pg.Client;

beforeAll(async () => {
  fleet = await TestFleet.start({
    replicas: { projector: 2 },
    deferred: ['projector2'],
    env: { KAFKA_TOPIC_PARTITIONS: '4' },
  });
  db = new pg.Client({ connectionString: fleet.env.DATABASE_URL });
  await db.connect();
}, 600_000);

afterAll(async () => {
  await db?.end();
  await fleet?.stop();
});

interface Member {
  account: JoinedAccount;
  connector: TestConnector;
  sessions: string[][];
  goferId: string;
  accepted: number;
}

/** Each account posts to its Gofer's role-chat, one message after the other, until stopped. */
function chatter(members: Member[]) {
  let stopped = false;
  const loops = members.map(async (m, i) => {
    for (let n = 0; !stopped; n++) {
      const r = await m.connector
        .rest('POST', `/gofers/${m.goferId}/chat/messages`, { content: `account ${i} says ${n}` })
        .catch(() => ({ status: 0 }));
      if (r.status === 202) m.accepted++;
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  return {
    accepted: () => members.reduce((n, m) => n + m.accepted, 0),
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** The stored offset of a stage's partition (where its next batch starts). */
async function storedOffset(b: HeldBatch): Promise<bigint> {
  const r = await db.query<{ next: string }>(
    'select next_offset::text as next from projector.offsets where consumer = $1 and topic = $2 and partition = $3',
    [b.stage, b.topic, b.partition],
  );
  return BigInt(r.rows[0]?.next ?? '0');
}

describe('when projector replicas join, die and pause while accounts write', () => {
  it('keeps each account seq dense and in event order, stores and pushes each envelope once', async () => {
    const members: Member[] = await Promise.all(
      Array.from({ length: ACCOUNTS }, async (_, i) => {
        const account = await joinAccount(fleet.url, fleet.mailbox, `p${i}-${fleet.id}@example.com`);
        const connector = new TestConnector({ baseUrl: fleet.url, token: account.apiKey });
        await connector.connect();
        const made = await connector.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
        expect(made.status, made.text).toBe(201);
        return {
          account,
          connector,
          sessions: socketSessions(connector),
          goferId: made.body.goferId,
          accepted: 0,
        };
      }),
    );
    const traffic = chatter(members);
    const flowing = async (what: string) => {
      const before = traffic.accepted();
      await waitFor(() => traffic.accepted() >= before + 2 * ACCOUNTS, { timeoutMs: 120_000, what });
    };
    try {
      await flowing('the chat to flow');

      // (a) A second replica joins mid-stream; each takes some of the four partitions of each
      // stage and applies batches of them. It holds each batch, inside its transaction, for a moment.
      const joined = Date.now();
      await fleet.launchLater('projector2', { PROJECTOR_QA_HOLD_MS: '1500', PROJECTOR_QA_HOLD_AT: 'commit' });
      const replicas = ['projector', 'projector2'] as const;
      await waitFor(
        () =>
          replicas.every(
            (n) => assignedTo(fleet, n, 'oan', joined) > 0 && assignedTo(fleet, n, 'domain', joined) > 0,
          ) && replicas.reduce((sum, n) => sum + assignedTo(fleet, n, 'oan', joined), 0) === 4,
        { timeoutMs: 60_000, what: 'the four partitions of oan.events split over both replicas' },
      );
      const firstBefore = await projectorCounter(fleet, 'projector', 'oan_projector_envelopes_total');
      await waitFor(
        async () =>
          (await projectorCounter(fleet, 'projector2', 'oan_projector_envelopes_total')) > 0 &&
          (await projectorCounter(fleet, 'projector', 'oan_projector_envelopes_total')) > firstBefore,
        { timeoutMs: 60_000, what: 'both replicas writing envelopes' },
      );

      // (b) Killed -9 while it holds a batch inside its transaction: none of it commits, and the
      // other replica applies it once the group gives it the partitions.
      const aimed = Date.now();
      const held = await waitFor(
        () =>
          heldBatches(fleet, 'projector2', aimed).find((b) => b.stage === 'oan' && Date.now() - b.time < 500),
        { timeoutMs: 60_000, intervalMs: 50, what: 'projector2 holding a batch of oan.events' },
      );
      await fleet.kill('projector2');
      expect(await storedOffset(held)).toBeLessThanOrEqual(BigInt(held.last));
      await waitFor(async () => (await storedOffset(held)) > BigInt(held.last), {
        timeoutMs: 90_000,
        what: 'the other replica applying the batch the dead one held',
      });
      await flowing('the chat to flow after the kill');

      // (c) Back, holding each batch before it applies it; paused (SIGSTOP) with one in hand on a
      // partition it already applied a batch of, longer than the session timeout: the group gives
      // the partition to the other replica, which moves its offset on. Resumed, the paused one
      // tries its batch and the offset's compare-and-set refuses it.
      const restarted = Date.now();
      await fleet.launchLater('projector2', { PROJECTOR_QA_HOLD_MS: '1500', PROJECTOR_QA_HOLD_AT: 'apply' });
      const inHand = await waitFor(
        () => {
          const oan = heldBatches(fleet, 'projector2', restarted).filter((b) => b.stage === 'oan');
          const last = oan.at(-1);
          const fresh = last && Date.now() - last.time < 700;
          return fresh && oan.slice(0, -1).some((b) => b.partition === last.partition) ? last : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 50, what: 'projector2 holding a second batch of one partition' },
      );
      fleet.pause('projector2');
      const paused = Date.now();
      const atPause = await storedOffset(inHand);
      await waitFor(async () => (await storedOffset(inHand)) > atPause, {
        timeoutMs: 90_000,
        what: 'the other replica moving the paused one’s partition on',
      });
      fleet.resume('projector2');
      // The batch it held, not a later one: its commit is the one the compare-and-set refuses.
      await waitFor(
        () =>
          loggedSince(
            fleet,
            'projector2',
            'batch commit refused: another member moved the partition offset',
            paused,
          ).some(
            (l) => l.stage === 'oan' && Number(l.partition) === inHand.partition && l.first === inHand.first,
          ),
        { timeoutMs: 60_000, what: 'the resumed replica’s commit of the batch it held refused' },
      );
      await flowing('the chat to flow after the pause');
    } finally {
      await traffic.stop();
    }

    // Every account's notifications went to one partition of oan.events, and the accounts to more than one.
    const keys = await partitionsByKey(fleet.env.KAFKA_BROKERS!, `${fleet.env.TOPIC_PREFIX}oan.events`);
    for (const m of members) expect(keys.get(m.account.userId)?.size, m.account.userId).toBe(1);
    expect(new Set(members.map((m) => [...keys.get(m.account.userId)!][0])).size).toBeGreaterThan(1);

    for (const m of members) {
      const who = m.account.userId;
      // The Gofer's replies in the order the gofers store appended them: every one became an envelope.
      const replies = await waitFor(
        async () => {
          const events = await db.query<{ id: string }>(
            `select data->>'messageId' as id from gofers.events
              where account_id = $1 and type = 'ChatMessageAdded' and data->>'role' = 'assistant' order by position`,
            [who],
          );
          const rows = await db.query<{ id: string }>(
            `select envelope::jsonb->'payload'->>'messageId' as id from read.oan_event
              where account_id = $1 and type in ('gofer_message', 'gofer_question') order by seq`,
            [who],
          );
          const want = events.rows.map((r) => r.id);
          return want.length > 0 && want.length === rows.rows.length
            ? { want, got: rows.rows.map((r) => r.id) }
            : undefined;
        },
        { timeoutMs: 120_000, what: `every reply to ${who} in the event table` },
      );
      expect(replies.got).toEqual(replies.want);

      const rows = (
        await db.query<{ seq: string; event_id: string }>(
          'select seq::text as seq, event_id from read.oan_event where account_id = $1 order by oan_event.seq',
          [who],
        )
      ).rows;
      expect(rows.map((r) => Number(r.seq))).toEqual(rows.map((_, i) => i + 1));
      expect(new Set(rows.map((r) => r.event_id)).size).toBe(rows.length);

      // The connector got each envelope once, in seq order; each socket connection pushed each once, in order.
      await waitFor(
        async () => {
          await m.connector.idle();
          return m.connector.cursor === BigInt(rows.at(-1)!.seq);
        },
        { timeoutMs: 60_000, what: `${who}'s connector caught up` },
      );
      const firstSeq = Number(m.connector.delivered[0]!.seq);
      expect(m.connector.delivered.map((e: OanEventEnvelope) => e.eventId)).toEqual(
        rows.slice(firstSeq - 1).map((r) => r.event_id),
      );
      for (const session of m.sessions) {
        const seqs = session.map(Number);
        expect(seqs, `${who}: a socket connection`).toEqual([...seqs].sort((x, y) => x - y));
        expect(new Set(seqs).size, `${who}: a socket connection`).toBe(seqs.length);
      }
      m.connector.close();
    }

    // The replay (both replicas stopped) rebuilds every read model and the event table byte for byte.
    await expectReplayRebuilds(fleet);
  }, 1_200_000);
});
