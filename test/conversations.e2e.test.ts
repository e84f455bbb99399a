import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import {
  joinAccount,
  pdf,
  png,
  REPO_ROOT,
  TestConnector,
  TestFleet,
  waitFor,
  type JoinedAccount,
} from '@oan/testing';
import { corrupt, dumpEventTable, dumpTables, matchTwoAccounts, type Answer, type Match } from './support.ts';

/** Messages each side sends, all at once with the other side; every ATTACH_EVERY-th carries files. */
const PER_SIDE = 500;
const ATTACH_EVERY = 50;
/** Requests in flight per side: changeSequences are still decided one at a time per conversation. */
const WORKERS = 4;

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
  senderUserId: string;
  content: string;
  attachments: Attachment[];
  changeSequence: string;
  createdAt: string;
}
interface Side {
  name: 'a' | 'b';
  account: JoinedAccount;
  me: TestConnector;
  peer: TestConnector;
  /** What the POST answers said, in the sender's order. */
  sent: Message[];
}

let fleet: TestFleet;
let m: Match;
let sides: [Side, Side];
/** What each side's history follower read during the exchange. */
let followed: Promise<Message[]>[] = [];
/** Every upload: its answer, its bytes, and who may read it from the other side. */
const uploads = new Map<string, { attachment: Attachment; bytes: Buffer; recipient: Side }>();

beforeAll(async () => {
  fleet = await TestFleet.start();
  m = await matchTwoAccounts(fleet, ['talk-a', 'talk-b']);
  sides = [
    { name: 'a', account: m.a, me: m.ca, peer: m.cb, sent: [] },
    { name: 'b', account: m.b, me: m.cb, peer: m.ca, sent: [] },
  ];
});
afterAll(async () => {
  m?.ca.close();
  m?.cb.close();
  await fleet?.stop();
});

const path = (rest = '') => `/conversations/${m.conversationId}${rest}`;
const other = (s: Side) => (s === sides[0] ? sides[1] : sides[0]);

/** A conversation attachment upload through the edge, one part `file`, as a connector uploads. */
async function upload(apiKey: string, conversationId: string, file: Blob, name: string): Promise<Answer> {
  const form = new FormData();
  form.append('file', file, name);
  const res = await fetch(`${fleet.url}/api/v1/conversations/${conversationId}/attachments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, text, body: (text ? JSON.parse(text) : undefined) as unknown };
}

/** The k-th attachment message's files: a photo alone, or a PDF and a text file (order kept). */
async function uploadFiles(side: Side, k: number): Promise<Attachment[]> {
  const files: [Buffer, string, string][] =
    k % 2 === 0
      ? [[png(16 + k, 9 + k), 'image/png', `photo-${side.name}-${k}.png`]]
      : [
          [pdf(k + (side.name === 'b' ? 100 : 0)), 'application/pdf', `brief-${side.name}-${k}.pdf`],
          [
            Buffer.from(`notes ${side.name} ${k} — ${randomUUID()}\n`),
            'text/plain',
            `notes-${side.name}-${k}.txt`,
          ],
        ];
  const out: Attachment[] = [];
  for (const [bytes, type, name] of files) {
    const res = await upload(side.account.apiKey, m.conversationId, new Blob([bytes], { type }), name);
    expect(res.status, res.text).toBe(201);
    const { attachment } = res.body as { attachment: Attachment };
    expect(attachment).toMatchObject({ name, mimeType: type, size: bytes.length });
    if (type === 'image/png')
      expect(attachment).toMatchObject({ kind: 'photo', width: 16 + k, height: 9 + k });
    else expect(attachment.kind).toBe('document');
    uploads.set(attachment.attachmentId, { attachment, bytes, recipient: other(side) });
    out.push(attachment);
  }
  return out;
}

/** One side's PER_SIDE messages, WORKERS at a time; every other attachment message has no text. */
async function sendAll(side: Side): Promise<Message[]> {
  const sent = new Array<Message>(PER_SIDE);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < PER_SIDE; i = next++) {
      const k = Math.floor(i / ATTACH_EVERY);
      const files = i % ATTACH_EVERY === ATTACH_EVERY - 1 ? await uploadFiles(side, k) : [];
      const content = files.length > 0 && k % 2 === 1 ? undefined : `${side.name} → #${i} ✓`;
      const res = await side.me.rest<Message>('POST', path('/messages'), {
        ...(content === undefined ? {} : { content }),
        ...(files.length > 0 ? { attachmentIds: files.map((f) => f.attachmentId) } : {}),
      });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ senderUserId: side.account.userId, content: content ?? '' });
      expect(res.body.attachments).toEqual(files);
      sent[i] = res.body;
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  return sent;
}

const relays = (es: OanEventEnvelope[]) =>
  es.filter((e) => e.type === 'relay_message' && e.conversationId === m.conversationId);

/** Every page after `since` (the last item's changeSequence) until an empty one. */
async function history(c: TestConnector, limit: number): Promise<Message[]> {
  const all: Message[] = [];
  for (let since = '0'; ;) {
    const page = await c.rest<Message[]>('GET', path(`/messages?since=${since}&limit=${limit}`));
    expect(page.status, page.text).toBe(200);
    expect(page.body.length).toBeLessThanOrEqual(limit);
    if (page.body.length === 0) return all;
    all.push(...page.body);
    since = page.body.at(-1)!.changeSequence;
  }
}

/**
 * A reader polling the history while messages flow, cursor = last item's changeSequence: two senders'
 * messages are projected from two partitions, so a page must stop before one not projected yet
 * (pages are in ascending changeSequence) or the cursor would skip it. Stops after an empty page
 * once `stop` is set.
 */
async function follow(c: TestConnector, stop: { now: boolean }): Promise<Message[]> {
  const seen: Message[] = [];
  for (let since = '0'; ;) {
    const last = stop.now;
    const page = await c.rest<Message[]>('GET', path(`/messages?since=${since}&limit=200`));
    expect(page.status, page.text).toBe(200);
    seen.push(...page.body);
    if (page.body.length > 0) since = page.body.at(-1)!.changeSequence;
    else if (last) return seen;
    else await new Promise((r) => setTimeout(r, 25));
  }
}

const bySequence = (ms: Message[]) =>
  [...ms].sort((x, y) => Number(x.changeSequence) - Number(y.changeSequence));

describe('two matched accounts in their conversation, relayed as events', () => {
  it(`exchange ${PER_SIDE} messages each way at once; each reaches only the other side, once, in order`, async () => {
    const stop = { now: false };
    followed = sides.map((side) => follow(side.me, stop));
    // Awaited by the next test; a failure here must not also surface as an unhandled rejection.
    for (const reading of followed) reading.catch(() => undefined);
    try {
      const [fromA, fromB] = await Promise.all(sides.map(sendAll));
      sides[0].sent = fromA!;
      sides[1].sent = fromB!;
      expect(uploads.size).toBe(2 * (PER_SIDE / ATTACH_EVERY) * 1.5);

      for (const side of sides) {
        const receiver = side.peer;
        const byId = new Map(side.sent.map((msg) => [msg.id, msg]));
        await waitFor(() => relays(receiver.delivered).length >= PER_SIDE, {
          timeoutMs: 60_000,
          what: `${PER_SIDE} relay_message on the other side of ${side.name} (${relays(receiver.delivered).length} so far)`,
        });
        await receiver.idle();
        const got = relays(receiver.delivered);
        // Exactly once each, none missing, and the raw socket pushed exactly what was delivered.
        expect(got.map((e) => e.payload.messageId).sort()).toEqual([...byId.keys()].sort());
        expect(receiver.disconnects).toEqual([]);
        expect(relays(receiver.pushes)).toEqual(got);
        // In changeSequence order (the sender's order of commit) and in seq order.
        const sequences = got.map((e) => Number(byId.get(e.payload.messageId as string)!.changeSequence));
        expect(sequences).toEqual([...sequences].sort((x, y) => x - y));
        expect(new Set(sequences).size).toBe(PER_SIDE);
        const seqs = got.map((e) => BigInt(e.seq));
        expect(seqs.every((s, i) => i === 0 || s > seqs[i - 1]!)).toBe(true);
        // The frozen relay_message payload: no goferId; attachments only when there are some.
        for (const e of got) {
          const msg = byId.get(e.payload.messageId as string)!;
          expect(e).toEqual({
            v: 1,
            seq: e.seq,
            eventId: expect.any(String),
            type: 'relay_message',
            source: 'counterpart_party',
            conversationId: m.conversationId,
            reply: { method: 'POST', path: `/api/v1/conversations/${m.conversationId}/messages` },
            payload: {
              messageId: msg.id,
              content: msg.content,
              createdAt: msg.createdAt,
              ...(msg.attachments.length > 0 ? { attachments: msg.attachments } : {}),
            },
            createdAt: msg.createdAt,
          });
        }
        // Never an echo on the sender's own socket.
        expect(relays(side.me.pushes).filter((e) => byId.has(e.payload.messageId as string))).toEqual([]);
      }
    } finally {
      stop.now = true;
    }
  });

  it('both sides page the same 1000 messages back, changeSequence 1..1000, live and with any page size', async () => {
    const all = bySequence([...sides[0].sent, ...sides[1].sent]);
    expect(all.map((msg) => msg.changeSequence)).toEqual(
      Array.from({ length: 2 * PER_SIDE }, (_, i) => String(i + 1)),
    );
    // Followed while it was written, and read again after, by both sides.
    for (const reading of followed) expect(await reading).toEqual(all);
    for (const side of sides) {
      for (const limit of [200, 37]) expect(await history(side.me, limit)).toEqual(all);
      const first = await side.me.rest<Message[]>('GET', path('/messages'));
      expect(first.body).toEqual(all.slice(0, 50));
    }
  });

  it('serves each file from a signed URL that the other side reads without credentials', async () => {
    expect(uploads.size).toBeGreaterThan(0);
    for (const [attachmentId, { bytes, recipient }] of uploads) {
      const signed = await recipient.me.rest<{ url: string }>(
        'GET',
        path(`/attachments/${attachmentId}/url`),
      );
      expect(signed.status, signed.text).toBe(200);
      const plain = await fetch(signed.body.url);
      expect(plain.status).toBe(200);
      expect(Buffer.from(await plain.arrayBuffer()).equals(bytes)).toBe(true);
      // A credential is ignored, never required.
      const withKey = await fetch(signed.body.url, {
        headers: { authorization: `Bearer ${recipient.account.apiKey}` },
      });
      expect(withKey.status).toBe(200);
      expect(Buffer.from(await withKey.arrayBuffer()).equals(bytes)).toBe(true);
    }
  });

  it('gives a third account one byte-identical 403 on every route, for this and an unknown id', async () => {
    const stranger = await joinAccount(fleet.url, fleet.mailbox, `stranger-${fleet.id}@example.com`);
    const sc = new TestConnector({ baseUrl: fleet.url, token: stranger.apiKey });
    await sc.connect();
    try {
      const attachmentId = uploads.keys().next().value!;
      const messageId = sides[0].sent[0]!.id;
      const routes = (who: TestConnector, key: string, conv: string, ids: { msg: string; att: string }) => [
        () => who.rest('GET', `/conversations/${conv}/messages`),
        () => who.rest('GET', `/conversations/${conv}/messages?since=0&limit=200`),
        () => who.rest('POST', `/conversations/${conv}/messages`, { content: 'let me in' }),
        () => upload(key, conv, new Blob(['let me in'], { type: 'text/plain' }), 'in.txt'),
        () => who.rest('GET', `/conversations/${conv}/attachments/${ids.att}/url`),
        () => who.rest('DELETE', `/conversations/${conv}/messages/${ids.msg}`),
      ];
      const real = routes(sc, stranger.apiKey, m.conversationId, { msg: messageId, att: attachmentId });
      const unknown = randomUUID();
      const fake = routes(sc, stranger.apiKey, unknown, { msg: randomUUID(), att: randomUUID() });
      // A participant asking about a conversation that is not there gets that same answer.
      const mine = routes(m.ca, m.a.apiKey, unknown, { msg: randomUUID(), att: randomUUID() });
      const answers: Answer[] = [];
      for (const call of [...real, ...fake, ...mine]) answers.push(await call());
      expect(answers.map((r) => r.status)).toEqual(answers.map(() => 403));
      expect(new Set(answers.map((r) => r.text))).toEqual(new Set([answers[0]!.text]));
      expect(JSON.parse(answers[0]!.text)).toEqual({ error: expect.any(String), code: 'FORBIDDEN' });

      // Nothing happened: still 1000 messages, the first one still there, nothing relayed to anyone.
      const tail = await m.cb.rest<Message[]>('GET', path(`/messages?since=${2 * PER_SIDE - 1}`));
      expect(tail.body.map((msg) => msg.changeSequence)).toEqual([String(2 * PER_SIDE)]);
      expect((await m.cb.rest<Message[]>('GET', path('/messages?limit=1'))).body[0]!.id).toBe(
        bySequence([...sides[0].sent, ...sides[1].sent])[0]!.id,
      );
      expect(relays(sc.delivered)).toEqual([]);
    } finally {
      sc.close();
    }
  });

  it('lets the sender alone recall a message: gone from both histories, its files answer 404, the other side told', async () => {
    const [a, b] = sides;
    const target = a.sent.find((msg) => msg.attachments.length > 0)!;
    const pushed = b.me.pushes.length;
    const theirs = await b.me.rest('DELETE', path(`/messages/${target.id}`));
    expect(theirs).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    expect((await a.me.rest('DELETE', path(`/messages/${target.id}`))).status).toBe(204);
    expect((await a.me.rest('DELETE', path(`/messages/${target.id}`))).status).toBe(404);

    const expected = bySequence([...a.sent, ...b.sent]).filter((msg) => msg.id !== target.id);
    expect(await history(a.me, 200)).toEqual(expected);
    // B's reads wait for nothing of A's: the recall shows once the projector has it.
    await waitFor(async () => (await history(b.me, 200)).length === expected.length, {
      what: 'the recall in the other side history',
    });
    expect(await history(b.me, 200)).toEqual(expected);
    for (const { attachmentId } of target.attachments) {
      const url = await b.me.rest('GET', path(`/attachments/${attachmentId}/url`));
      expect(url.status).toBe(404);
      uploads.delete(attachmentId);
    }
    // The recall is a retraction (ADR 0037): the other side gets one relay_message saying so.
    await waitFor(() => b.me.pushes.length > pushed, { what: 'the retraction relayed' });
    await b.me.idle();
    expect(b.me.pushes.slice(pushed).map((e) => e.payload)).toEqual([
      {
        messageId: expect.any(String),
        content: '[retracted] The other side withdrew a message.',
        createdAt: expect.any(String),
        revision: { messageId: target.id, action: 'retract', count: 0 },
      },
    ]);
  });

  it('replaying the topics rebuilds the conversation read models and envelopes byte for byte', async () => {
    const db = fleet.env.DATABASE_URL!;
    const tables = ['read.conversations', 'read.conversation_attachments', 'read.conversation_messages'];
    const before = await dumpTables(db, tables);
    const events = await dumpEventTable(db);
    expect(before['read.conversation_messages']).toHaveLength(2 * PER_SIDE);
    expect(before['read.conversation_attachments']).toHaveLength(2 * (PER_SIDE / ATTACH_EVERY) * 1.5);
    // Every message's relay, and the recall's.
    expect(events.filter((line) => line.split('|')[3] === 'relay_message')).toHaveLength(2 * PER_SIDE + 1);
    await fleet.kill('projector');
    // A rebuild, not a re-apply onto the old rows: damage that only a rebuild repairs.
    await corrupt(db, [
      `delete from read.conversation_messages where change_sequence % 3 = 0`,
      `update read.conversation_messages set change_sequence = change_sequence + 100000, recalled_at = null`,
      `update read.conversation_attachments set message_id = null, deleted_at = now()`,
      `update read.conversations set status = 'closed', closed_at = now()`,
      `delete from read.oan_event where type = 'relay_message' and seq % 2 = 0`,
    ]);
    execFileSync(process.execPath, ['services/projector/src/replay.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fleet.env },
      stdio: 'pipe',
    });
    expect(await dumpTables(db, tables)).toEqual(before);
    expect(await dumpEventTable(db)).toEqual(events);
    await fleet.restart('projector');
  });

  it('goes on after the replay: the next message is changeSequence 1001 and the next seq', async () => {
    const [a, b] = sides;
    const last = BigInt(relays(b.me.delivered).at(-1)!.seq);
    const res = await a.me.rest<Message>('POST', path('/messages'), { content: 'still here?' });
    expect(res).toMatchObject({ status: 201, body: { changeSequence: String(2 * PER_SIDE + 1) } });
    const relayed = await waitFor(
      () => relays(b.me.delivered).find((e) => e.payload.messageId === res.body.id),
      { timeoutMs: 30_000, what: 'the relay after the replay' },
    );
    expect(BigInt(relayed.seq)).toBeGreaterThan(last);
    expect(relayed.payload).toEqual({
      messageId: res.body.id,
      content: 'still here?',
      createdAt: res.body.createdAt,
    });
  });
});
