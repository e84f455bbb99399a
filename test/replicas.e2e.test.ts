import { connect, address as coAddress } from 'connectonion';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import {
  PROCESS_KINDS,
  TestConnector,
  TestFleet,
  waitFor,
  type ProcessKind,
  type ProcessName,
} from '@oan/testing';
import {
  activeProjector,
  EdgeClient,
  loggedBy,
  loggedInOrder,
  socketSessions,
  Traffic,
  type Write,
} from './replicaTraffic.ts';
import { matchTwoAccounts, matchTwoAccountsSaying, WEDDING, type Match } from './support.ts';
import { WebhookReceiver } from './webhookReceiver.ts';

/**
 * Every process kind as two replicas (ADR 0039): a journey (join, the Gofer's interview, a match, a
 * conversation), then both sides writing while one replica of each kind after another is killed with
 * -9 and started again, then a second journey to its end. Nothing is lost or doubled: each account's
 * seq is dense, every socket connection pushed each envelope once, every write answered 2xx is there
 * once, and the duties that run once (the outbox's publishing, the projector's stages, the relay's
 * published Gofer, webhook delivery) moved to the surviving replica.
 */
let fleet: TestFleet;
let receiver: WebhookReceiver;
let db: pg.Client;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  fleet = await TestFleet.start({
    replicas: Object.fromEntries(PROCESS_KINDS.map((k) => [k, 2])),
    env: {
      KAFKA_TOPIC_PARTITIONS: '4',
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_POLL_MS: '200',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '1000',
    },
  });
  db = new pg.Client({ connectionString: fleet.env.DATABASE_URL });
  await db.connect();
}, 600_000);

afterAll(async () => {
  await db?.end();
  await fleet?.stop();
  await receiver?.close();
});

const ok = (w: Write) => typeof w.outcome === 'number' && w.outcome < 300;

/** The account's rows of the event table, in seq order. */
async function stored(accountId: string, after = '0') {
  const r = await db.query<{ seq: string; event_id: string; envelope: string }>(
    `select seq::text as seq, event_id, envelope from read.oan_event
      where account_id = $1 and seq > $2 order by oan_event.seq`,
    [accountId, after],
  );
  return r.rows;
}

/** Every message of the conversation, page by page. */
async function history(c: TestConnector, conversationId: string) {
  const all: { content: string; changeSequence: string }[] = [];
  for (let since = '0'; ;) {
    const page = await c.rest<typeof all>(
      'GET',
      `/conversations/${conversationId}/messages?since=${since}&limit=200`,
    );
    expect(page.status, page.text).toBe(200);
    if (page.body.length === 0) return all;
    all.push(...page.body);
    since = page.body.at(-1)!.changeSequence;
  }
}

/** The Gofer's whole chat, page by page (`since` the last row's time). */
async function chatHistory(c: TestConnector, goferId: string) {
  const all: { role: string; content: string; createdAt: string }[] = [];
  for (let since = new Date(0).toISOString(); ;) {
    const page = await c.rest<typeof all>(
      'GET',
      `/gofers/${goferId}/chat/messages?since=${encodeURIComponent(since)}`,
    );
    expect(page.status, page.text).toBe(200);
    all.push(...page.body);
    if (page.body.length < 200) return all;
    since = page.body.at(-1)!.createdAt;
  }
}

const count = (texts: string[], text: string) => texts.filter((t) => t === text).length;

describe('a fleet of two replicas of every kind', () => {
  let first: Match;

  it('runs the journey: join, the interview, a match, a conversation', async () => {
    first = await matchTwoAccounts(fleet, ['team', 'eng']);
    const sent = await first.ca.rest('POST', `/conversations/${first.conversationId}/messages`, {
      content: 'Hello from the team',
    });
    expect(sent.status, sent.text).toBe(201);
    await waitFor(
      () =>
        first.cb.delivered.find(
          (e) => e.type === 'relay_message' && e.payload.content === 'Hello from the team',
        ),
      { timeoutMs: 30_000, what: 'the message at the other side' },
    );
  }, 600_000);

  it('loses and doubles nothing while one replica of each kind after another is killed', async () => {
    const { a, b, ca, cb, ga, conversationId } = first;
    await Promise.all([ca.idle(), cb.idle()]);
    ca.close();
    cb.close();
    const [edge1, edge2] = fleet.urls as [string, string];
    // The connectors go on from their cursors on the second edge (the first one dies below).
    const sa = new TestConnector({ baseUrl: edge2, token: a.apiKey, cursor: String(ca.cursor) });
    const sb = new TestConnector({ baseUrl: edge2, token: b.apiKey, cursor: String(cb.cursor) });
    await Promise.all([sa.connect(), sb.connect()]);
    const sessions = { a: socketSessions(sa), b: socketSessions(sb) };

    // A's Gofer on the relay: one gofers replica announces it.
    const published = await sa.rest<{ address: string }>('PUT', `/gofers/${ga}/relay`);
    expect(published.status, published.text).toBe(200);
    const listings = () =>
      loggedBy(fleet, fleet.replicasOf('gofers'), (l) => l.msg === 'listed on the relay' && l.goferId === ga);
    // (Counted per replica: a replica lists the Gofer again when its relay socket reconnects.)
    await waitFor(() => listings().size === 1, { timeoutMs: 30_000, what: 'a replica announcing the Gofer' });
    const [relayHolder] = [...listings().keys()] as [ProcessName];
    const ask = async (text: string) =>
      (
        await connect(published.body.address, {
          relayUrl: edge2.replace('http://', 'ws://'),
          keys: coAddress.generate(),
        }).input(text, { timeoutMs: 30_000 })
      ).text;
    expect(await ask('Hello, are you there?')).not.toBe('');

    // B's webhook: every envelope after its start, to a receiver that answers 200.
    const hook = await sb.rest<{ id: string }>('POST', '/webhooks', { url: receiver.url('/b') });
    expect(hook.status, hook.text).toBe(201);
    const hookFrom = (
      await db.query<{ s: string }>('select last_seq::text as s from auth.webhooks where id = $1', [
        hook.body.id,
      ])
    ).rows[0]!.s;

    // The outbox replica that took the schema's lock last (it holds it until it dies).
    const leadership = (schema: string) =>
      loggedInOrder(
        fleet,
        fleet.replicasOf('outbox'),
        (l) => l.msg === 'outbox publisher is leader' && l.schema === schema,
      );
    // The replica that does a kind's one-at-a-time work, where there is one, is the one killed.
    const victims: [ProcessKind, () => ProcessName][] = [
      ['edge', () => 'edge'],
      ['gateway', () => 'gateway1'],
      ['auth', () => 'auth'],
      ['conversations', () => 'conversations'],
      ['gofers', () => relayHolder],
      ['matching', () => 'matching'],
      ['runtimes', () => 'runtimes'],
      ['outbox', () => leadership('conversations').at(-1)!.name],
      ['projector', () => activeProjector(fleet)!],
      ['agents', () => 'agents1'],
    ];
    expect(victims.map(([k]) => k).sort()).toEqual([...PROCESS_KINDS].sort());
    const traffic = new Traffic(
      { a: new EdgeClient([edge1, edge2], a.apiKey), b: new EdgeClient([edge1, edge2], b.apiKey) },
      conversationId,
      ga,
    );
    traffic.start();
    const survivorOf = (kind: ProcessKind, victim: ProcessName) =>
      fleet.replicasOf(kind).find((n) => n !== victim)!;
    const killedAt = new Map<ProcessKind, number>();
    for (const [kind, pick] of victims) {
      const victim = pick();
      expect(victim, kind).toBeDefined();
      const before = traffic.succeeded();
      killedAt.set(kind, Date.now());
      await fleet.kill(victim);
      await waitFor(() => traffic.succeeded() >= before + 6, {
        timeoutMs: 90_000,
        what: `writes going on after ${victim} was killed`,
      });
      const survivor = survivorOf(kind, victim);
      if (kind === 'gofers') {
        // The other replica takes the Gofer over once the dead one's lease lapses, and answers.
        await waitFor(() => listings().has(survivor), {
          timeoutMs: 60_000,
          what: `${survivor} announcing the Gofer`,
        });
        expect(await ask('Are you still there?')).not.toBe('');
      }
      if (kind === 'outbox')
        await waitFor(
          () => leadership('conversations').some((l) => l.name === survivor && l.time > killedAt.get(kind)!),
          {
            timeoutMs: 30_000,
            what: `${survivor} publishing the conversations outbox`,
          },
        );
      if (kind === 'projector')
        await waitFor(() => activeProjector(fleet) === survivor, {
          timeoutMs: 60_000,
          what: `${survivor} consuming oan.events`,
        });
      await fleet.restart(victim);
    }
    await traffic.stop();

    // Only a write in flight on a replica that died may come back without a 2xx: a 503, or a
    // connection cut by a dying edge. Its outcome is unknown, so it was never sent again.
    const unsure = traffic.writes.filter((w) => !ok(w));
    for (const w of unsure) expect([503, 'unknown'], `${w.what} ${w.text}`).toContain(w.outcome);
    expect(unsure.length).toBeLessThanOrEqual(6);
    expect(traffic.writes.filter(ok).length).toBeGreaterThanOrEqual(victims.length * 6);

    // Every message answered 201 is in the conversation once, and the sequence has no gap.
    const messages = traffic.writes.filter((w) => w.what === 'message');
    const texts = await waitFor(
      async () => {
        const all = (await history(sa, conversationId)).map((m) => m.content);
        return messages.filter(ok).every((w) => all.includes(w.text)) ? all : undefined;
      },
      { timeoutMs: 60_000, what: 'every accepted message in the history' },
    );
    const all = await history(sa, conversationId);
    expect(all.map((m) => Number(m.changeSequence))).toEqual(all.map((_, i) => i + 1));
    for (const w of messages) {
      if (ok(w)) expect(count(texts, w.text), w.text).toBe(1);
      else expect(count(texts, w.text), w.text).toBeLessThanOrEqual(1);
    }

    // Every chat message answered 202 is in the Gofer's chat once.
    const chat = (await chatHistory(sa, ga)).filter((m) => m.role === 'user').map((m) => m.content);
    for (const w of traffic.writes.filter((x) => x.what === 'chat')) {
      if (ok(w)) expect(count(chat, w.text), w.text).toBe(1);
      else expect(count(chat, w.text), w.text).toBeLessThanOrEqual(1);
    }

    // Each account's seq is dense and each envelope stored once; the connectors got all of them,
    // each socket connection pushed each once and in order.
    for (const [who, c, account] of [
      ['a', sa, a],
      ['b', sb, b],
    ] as const) {
      const rows = await waitFor(
        async () => {
          await c.idle();
          const r = await stored(account.userId);
          return r.length > 0 && BigInt(r.at(-1)!.seq) === c.cursor ? r : undefined;
        },
        { timeoutMs: 60_000, what: `${who}'s connector caught up with the table` },
      ).catch(async (err: Error) => {
        const last = (await stored(account.userId)).at(-1)?.seq;
        const seen = c.delivered.map((e) => e.seq).join(',');
        throw new Error(
          `${err.message}: the table is at ${last}, the connector at ${c.cursor} (delivered ${seen}; ` +
            `disconnects ${c.disconnects.join(',')}; failed backfills ${c.backfillFailures.join(' | ')})`,
        );
      });
      expect(rows.map((r) => Number(r.seq))).toEqual(rows.map((_, i) => i + 1));
      expect(new Set(rows.map((r) => r.event_id)).size).toBe(rows.length);
      const got = [...(who === 'a' ? ca : cb).delivered, ...c.delivered];
      const firstSeq = Number(got[0]!.seq);
      expect(got.map((e) => e.eventId)).toEqual(rows.slice(firstSeq - 1).map((r) => r.event_id));
      for (const session of sessions[who]) {
        const seqs = session.map(Number);
        expect(seqs, `${who}: a socket connection`).toEqual([...seqs].sort((x, y) => x - y));
        expect(new Set(seqs).size, `${who}: a socket connection`).toBe(seqs.length);
      }
    }

    // The webhook got every envelope of B after its start, in order; the only repeat allowed is
    // one the auth replica that died had sent but not recorded as answered.
    const want = (await stored(b.userId, hookFrom)).map((r) => r.envelope);
    const bodies = await waitFor(
      () => {
        const acked = receiver.at('/b').filter((r) => r.answered !== undefined && r.answered < 300);
        const distinct = acked.map((r) => r.body).filter((body, i, xs) => i === 0 || xs[i - 1] !== body);
        return distinct.length === want.length ? { acked, distinct } : undefined;
      },
      { timeoutMs: 60_000, what: 'every envelope of B at its webhook' },
    );
    expect(bodies.distinct).toEqual(want);
    expect(bodies.acked.length - bodies.distinct.length).toBeLessThanOrEqual(1);

    // The relay: the first holder announced the Gofer until it died, then only the other one did
    // (again after the agents replica its socket was on died), never the first one back from its restart.
    const announced = loggedInOrder(
      fleet,
      fleet.replicasOf('gofers'),
      (l) => l.msg === 'listed on the relay' && l.goferId === ga,
    );
    const takeover = announced.findIndex((l) => l.name !== relayHolder);
    expect(announced.slice(0, takeover).every((l) => l.name === relayHolder)).toBe(true);
    expect(announced.slice(takeover).every((l) => l.name === survivorOf('gofers', relayHolder))).toBe(true);
    expect(announced[takeover]!.time).toBeGreaterThan(killedAt.get('gofers')!);
    sa.close();
    sb.close();
  }, 1_800_000);

  it('runs another journey to its end after every kind lost a replica', async () => {
    const second = await matchTwoAccountsSaying(fleet, ['couple', 'lens'], WEDDING);
    try {
      const sent = await second.cb.rest('POST', `/conversations/${second.conversationId}/messages`, {
        content: 'See you in Lisbon',
      });
      expect(sent.status, sent.text).toBe(201);
      const arrived = await waitFor(
        () =>
          second.ca.delivered.find(
            (e: OanEventEnvelope) => e.type === 'relay_message' && e.payload.content === 'See you in Lisbon',
          ),
        { timeoutMs: 30_000, what: 'the message at the other side' },
      );
      expect(arrived.conversationId).toBe(second.conversationId);
      const rows = await stored(second.a.userId);
      expect(rows.map((r) => Number(r.seq))).toEqual(rows.map((_, i) => i + 1));
    } finally {
      second.ca.close();
      second.cb.close();
    }
  }, 600_000);
});
