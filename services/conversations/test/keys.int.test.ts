import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { toKafkaMessage, type RunningReactor } from '@oan/kafka';
import { body, expectError, waitFor } from '@oan/testing';
import { rebuildWriteState } from '../src/infra/store.ts';
import { closeConversationsOf } from '../src/commands/close.ts';
import { openConversation } from '../src/commands/context.ts';
import { KEY_CHANGES_BEFORE_DECISION_MS, startKeyNotices } from '../src/reactors/keyNotices.ts';
import { startOpener } from '../src/reactors/lifecycle.ts';
import { acceptedDecision, startConversationFleet, type Caller, type ConversationFleet } from './helpers.ts';

interface Key {
  keyId: string;
  publicKey: string;
  fingerprint: string;
  publishedAt: string;
}

let f: ConversationFleet;
let notices: RunningReactor;
let opener: RunningReactor;
const topic = (name: string) => `${f.fleet.baseEnv.TOPIC_PREFIX}${name}`;

beforeAll(async () => {
  f = await startConversationFleet();
  await f.fleet.kafka.ensureTopics([{ topic: topic('matching.events') }]);
  const deps = {
    kafka: f.fleet.kafka,
    registry: f.fleet.registry,
    ctx: f.ctx,
    logger: f.fleet.logger,
    topicPrefix: f.fleet.baseEnv.TOPIC_PREFIX!,
  };
  notices = await startKeyNotices(deps);
  opener = await startOpener(deps);
}, 90_000);
afterAll(async () => {
  await notices?.stop();
  await opener?.stop();
  await f?.fleet.kafka.deleteTopics([topic('matching.events')]).catch(() => undefined);
  await (
    await f?.fleet.kafka.admin()
  )
    ?.deleteGroups([topic('conversations.key-notices'), topic('conversations.opener')])
    .catch(() => undefined);
  await f?.close();
});

const noticesTo = async (accountId: string) =>
  (await f.envelopes(accountId)).filter(
    (e) => e.type === 'system_notice' && (e.payload as { kind?: string }).kind === 'conversation_key_changed',
  );

/** The sum of a topic's end offsets. */
const endOf = async (name: string) =>
  (await (await f.fleet.kafka.admin()).fetchTopicOffsets(topic(name))).reduce(
    (sum, p) => sum + BigInt(p.offset),
    0n,
  );

/** Waits until `topic` holds at least `records` and `group` has committed to its end on every partition. */
async function caughtUp(group: string, name: string, records: bigint): Promise<void> {
  const admin = await f.fleet.kafka.admin();
  await waitFor(
    async () => {
      const ends = await admin.fetchTopicOffsets(topic(name));
      if (ends.reduce((sum, p) => sum + BigInt(p.offset), 0n) < records) return false;
      const [committed] = await admin.fetchOffsets({ groupId: topic(group), topics: [topic(name)] });
      return ends.every(
        (end) =>
          end.offset === '0' ||
          BigInt(committed!.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1') >=
            BigInt(end.offset),
      );
    },
    { what: `${group} caught up on ${name}` },
  );
}

/** A fresh X25519 public key, as a client makes it. */
const newKey = () => generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }).x!;
const put = (who: Caller, keyId: string, payload: unknown) =>
  f.app.inject({
    method: 'PUT',
    url: `/api/v1/keys/${keyId}`,
    headers: who.headers,
    payload: payload as object,
  });
const del = (who: Caller, keyId: string) =>
  f.app.inject({ method: 'DELETE', url: `/api/v1/keys/${keyId}`, headers: who.headers });
const list = async (who: Caller) =>
  body<{ keys: Key[] }>(await f.app.inject({ method: 'GET', url: '/api/v1/keys', headers: who.headers }))
    .keys;
const keyEvents = async (accountId: string) =>
  (await f.events()).filter((e) => e.type.startsWith('DeviceKey') && e.partitionKey === accountId);

describe('PUT /keys/:keyId', () => {
  it('publishes a key (201), answers a retry of the same pair with 200 and the same key', async () => {
    const me = await f.account();
    const keyId = randomUUID();
    const publicKey = newKey();
    const first = await put(me, keyId, { publicKey });
    expect(first.statusCode).toBe(201);
    const key = body<Key>(first);
    expect(Object.keys(key)).toEqual(['keyId', 'publicKey', 'fingerprint', 'publishedAt']);
    expect(key).toMatchObject({ keyId, publicKey });
    expect(key.fingerprint).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){9}$/);
    expect(key.publishedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const again = await put(me, keyId, { publicKey });
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(await list(me)).toEqual([key]);
    expect((await keyEvents(me.accountId)).map((e) => e.type)).toEqual(['DeviceKeyPublished']);
  });

  it('refuses the keyId with another key, and the key under another keyId (409 KEY_ID_IN_USE)', async () => {
    const me = await f.account();
    const keyId = randomUUID();
    const publicKey = newKey();
    expect((await put(me, keyId, { publicKey })).statusCode).toBe(201);
    expectError(await put(me, keyId, { publicKey: newKey() }), 409, 'KEY_ID_IN_USE');
    expectError(await put(me, randomUUID(), { publicKey }), 409, 'KEY_ID_IN_USE');
    // Another account may publish the same key bytes under the same keyId: keys are per account.
    const other = await f.account();
    expect((await put(other, keyId, { publicKey })).statusCode).toBe(201);
    expect(await keyEvents(me.accountId)).toHaveLength(1);
  });

  it('refuses malformed ids, keys and bodies with 400 VALIDATION_ERROR, storing nothing', async () => {
    const me = await f.account();
    const before = (await f.events()).length;
    const raw = randomBytes(32);
    const zero = Buffer.alloc(32);
    const lowOrder = Buffer.from('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800', 'hex');
    const bad: [string, unknown][] = [
      ['not-a-uuid', { publicKey: newKey() }],
      [randomUUID(), {}],
      [randomUUID(), { publicKey: randomBytes(31).toString('base64url') }],
      [randomUUID(), { publicKey: randomBytes(33).toString('base64url') }],
      [randomUUID(), { publicKey: raw.toString('base64') }], // padded, and perhaps + or /
      [randomUUID(), { publicKey: `${raw.toString('base64url').slice(0, 42)}B` }], // not canonical
      [randomUUID(), { publicKey: zero.toString('base64url') }],
      [randomUUID(), { publicKey: lowOrder.toString('base64url') }],
      [randomUUID(), { publicKey: newKey(), label: 'laptop' }],
      [randomUUID(), { publicKey: 42 }],
    ];
    for (const [keyId, payload] of bad) {
      expectError(await put(me, keyId, payload), 400, 'VALIDATION_ERROR');
    }
    expect((await f.events()).length).toBe(before);
    expect(await list(me)).toEqual([]);
  });

  it('of two racing PUTs of one keyId with different keys, answers one 201 and one 409', async () => {
    for (let round = 0; round < 3; round++) {
      const me = await f.account();
      const keyId = randomUUID();
      const answers = await Promise.all([
        put(me, keyId, { publicKey: newKey() }),
        put(me, keyId, { publicKey: newKey() }),
      ]);
      expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409]);
      const won = body<Key>(answers.find((a) => a.statusCode === 201)!);
      expect(await list(me)).toEqual([won]);
      expect(await keyEvents(me.accountId)).toHaveLength(1);
    }
  });

  it('of twelve racing PUTs of new keys, publishes eight and refuses four with TOO_MANY_KEYS', async () => {
    const me = await f.account();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => put(me, randomUUID(), { publicKey: newKey() })),
    );
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(8);
    for (const a of answers.filter((x) => x.statusCode !== 201)) expectError(a, 409, 'TOO_MANY_KEYS');
    expect(await list(me)).toHaveLength(8);
    // Retiring one makes room for one.
    const [oldest] = await list(me);
    expect((await del(me, oldest!.keyId)).statusCode).toBe(204);
    expect((await put(me, randomUUID(), { publicKey: newKey() })).statusCode).toBe(201);
    expectError(await put(me, randomUUID(), { publicKey: newKey() }), 409, 'TOO_MANY_KEYS');
  });
});

describe('DELETE /keys/:keyId and GET /keys', () => {
  it('retires a key for good (204, again 204); an unknown or another account’s keyId is one 404', async () => {
    const me = await f.account();
    const other = await f.account();
    const [k1, k2, k3] = [randomUUID(), randomUUID(), randomUUID()];
    const pk1 = newKey();
    for (const k of [k1, k2])
      expect((await put(me, k, { publicKey: k === k1 ? pk1 : newKey() })).statusCode).toBe(201);
    expect((await put(other, k3, { publicKey: newKey() })).statusCode).toBe(201);
    const both = await list(me);
    expect(both.map((k) => k.keyId)).toEqual([k1, k2]);
    const gone = await del(me, k1);
    expect(gone.statusCode).toBe(204);
    expect(gone.body).toBe('');
    expect((await del(me, k1)).statusCode).toBe(204);
    expect(await list(me)).toEqual([both[1]]);
    const unknown = await del(me, randomUUID());
    const foreign = await del(me, k3);
    expectError(unknown, 404, 'KEY_NOT_FOUND');
    expect(foreign.body).toBe(unknown.body);
    expect(foreign.statusCode).toBe(404);
    expect((await list(other)).map((k) => k.keyId)).toEqual([k3]);
    // A retired keyId, or its key, is never published again.
    expectError(await put(me, k1, { publicKey: pk1 }), 409, 'KEY_ID_IN_USE');
    expectError(await put(me, randomUUID(), { publicKey: pk1 }), 409, 'KEY_ID_IN_USE');
    expect((await keyEvents(me.accountId)).map((e) => e.type)).toEqual([
      'DeviceKeyPublished',
      'DeviceKeyPublished',
      'DeviceKeyRetired',
    ]);
  });
});

describe('GET /conversations/:id/keys', () => {
  it("lists both sides' current keys with their accountId; a third account gets the probe-safe 403", async () => {
    const m = await f.match();
    const ka = randomUUID();
    const kb = randomUUID();
    expect((await put(m.a, ka, { publicKey: newKey() })).statusCode).toBe(201);
    expect((await put(m.b, kb, { publicKey: newKey() })).statusCode).toBe(201);
    const read = (who: Caller, id = m.conversationId) =>
      f.app.inject({ method: 'GET', url: `/api/v1/conversations/${id}/keys`, headers: who.headers });
    const res = await read(m.b);
    expect(res.statusCode).toBe(200);
    const { keys } = body<{ keys: (Key & { accountId: string })[] }>(res);
    expect(keys.map((k) => [k.accountId, k.keyId])).toEqual([
      [m.a.accountId, ka],
      [m.b.accountId, kb],
    ]);
    expect(Object.keys(keys[0]!)).toEqual(['accountId', 'keyId', 'publicKey', 'fingerprint', 'publishedAt']);
    expect((await read(m.a)).body).toBe(res.body);
    const third = await f.account();
    const answers = [await read(third), await read(third, randomUUID()), await read(third, 'not an id!')];
    for (const a of answers) expectError(a, 403, 'FORBIDDEN');
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
  });
});

describe('key change notices', () => {
  it('tell the other side of each open conversation, once, even when the key event is delivered again', async () => {
    const m = await f.match();
    const closedOne = await f.match();
    const keyId = randomUUID();
    const published = body<Key>(await put(m.b, keyId, { publicKey: newKey() }));
    const payload = {
      kind: 'conversation_key_changed',
      conversationId: m.conversationId,
      accountId: m.b.accountId,
      keyId,
      fingerprint: published.fingerprint,
      change: 'published',
    };
    const [notice] = await waitFor(
      async () => {
        const n = await noticesTo(m.a.accountId);
        return n.length > 0 ? n : undefined;
      },
      { what: 'the published notice' },
    );
    expect(notice).toMatchObject({ type: 'system_notice', source: 'platform', payload });
    expect(JSON.stringify(notice!.payload)).toBe(JSON.stringify(payload));
    expect(notice).not.toHaveProperty('reply');
    expect(await noticesTo(m.b.accountId)).toEqual([]);

    // The same key event delivered again tells no one twice.
    const [event] = await sql<{ data: Record<string, unknown> }>(
      f.orm.em.fork(),
      `select data from conversations.events where type = 'DeviceKeyPublished' and account_id = ?`,
      [m.b.accountId],
    );
    const producer = await f.fleet.kafka.producer();
    await producer.send({
      topic: topic('conversations.events'),
      messages: [
        toKafkaMessage(f.fleet.registry, {
          key: m.b.accountId,
          type: 'DeviceKeyPublished',
          data: event!.data,
        }),
      ],
    });
    expect((await del(m.b, keyId)).statusCode).toBe(204);
    await waitFor(async () => (await noticesTo(m.a.accountId)).length === 2, { what: 'the retired notice' });
    const told = await noticesTo(m.a.accountId);
    expect(told.map((n) => (n.payload as { change: string }).change)).toEqual(['published', 'retired']);
    const changes = (await f.events()).filter(
      (e) => e.type === 'ConversationKeyChanged' && e.data.conversationId === m.conversationId,
    );
    expect(changes).toHaveLength(2);
    expect(changes.every((c) => c.partitionKey === m.b.accountId)).toBe(true);

    // A closed conversation tells no one: closedOne.b's key reaches its other, open conversation only.
    await closeConversationsOf(f.ctx, closedOne.b.goferId);
    const x = await f.account();
    const other = { conversationId: randomUUID(), matchId: randomUUID(), threadId: randomUUID() };
    await openConversation(
      f.ctx,
      {
        ...other,
        accountA: closedOne.b.accountId,
        goferA: randomUUID(),
        accountB: x.accountId,
        goferB: randomUUID(),
        openedAt: new Date().toISOString(),
      },
      null,
    );
    expect((await put(closedOne.b, randomUUID(), { publicKey: newKey() })).statusCode).toBe(201);
    await waitFor(async () => (await noticesTo(x.accountId)).length === 1, { what: 'the open one told' });
    expect(await noticesTo(closedOne.a.accountId)).toEqual([]);
  });
});

describe('key changes between a match’s decision and its opening', () => {
  it('are told when the conversation opens, once, and those from before the decision are not', async () => {
    const m = await f.match({ open: false });
    const before = await endOf('conversations.events');
    // B's first key is older than the decision (by more than the clock allowance); the second key
    // and the first one's retirement come after it.
    const [old, fresh] = [randomUUID(), randomUUID()];
    expect((await put(m.b, old, { publicKey: newKey() })).statusCode).toBe(201);
    const decidedAt = new Date(Date.now() + KEY_CHANGES_BEFORE_DECISION_MS + 100).toISOString();
    await new Promise((r) => setTimeout(r, 300));
    const published = body<Key>(await put(m.b, fresh, { publicKey: newKey() }));
    expect((await del(m.b, old)).statusCode).toBe(204);
    // The key-notice reactor has handled all three while the conversation was not open: told no one.
    await caughtUp('conversations.key-notices', 'conversations.events', before + 3n);
    expect(await noticesTo(m.a.accountId)).toEqual([]);

    const decided = acceptedDecision(m, decidedAt);
    const producer = await f.fleet.kafka.producer();
    const decision = toKafkaMessage(f.fleet.registry, {
      key: m.a.accountId,
      type: 'MatchRequestDecided',
      data: decided,
    });
    const decisionsBefore = await endOf('matching.events');
    // Delivered twice, as a crash between the opening and the telling would.
    await producer.send({ topic: topic('matching.events'), messages: [decision, decision] });
    await waitFor(async () => (await noticesTo(m.a.accountId)).length === 2, { what: 'A told' });
    await caughtUp('conversations.opener', 'matching.events', decisionsBefore + 2n);
    const told = await noticesTo(m.a.accountId);
    expect(told.map((n) => n.payload)).toEqual([
      {
        kind: 'conversation_key_changed',
        conversationId: m.conversationId,
        accountId: m.b.accountId,
        keyId: fresh,
        fingerprint: published.fingerprint,
        change: 'published',
      },
      expect.objectContaining({ keyId: old, change: 'retired' }),
    ]);
    expect(await noticesTo(m.b.accountId)).toEqual([]);
    // B publishing once more, now that it is open, is told by the key-notice reactor as before.
    expect((await put(m.b, randomUUID(), { publicKey: newKey() })).statusCode).toBe(201);
    await waitFor(async () => (await noticesTo(m.a.accountId)).length === 3, { what: 'the open one told' });
  });
});

describe('the key directory’s write state', () => {
  it('is reproduced by a rebuild from the events', async () => {
    const me = await f.account();
    const k = randomUUID();
    await put(me, k, { publicKey: newKey() });
    await put(me, randomUUID(), { publicKey: newKey() });
    await del(me, k);
    const dump = async () =>
      sql(
        f.orm.em.fork(),
        `select (select jsonb_agg(a order by account_id) from conversations.device_key_accounts a) as a,
                (select jsonb_agg(k order by account_id, key_id) from conversations.device_keys k) as k,
                (select jsonb_agg(m order by id) from conversations.messages m) as m,
                (select jsonb_agg(c order by id) from conversations.conversations c) as c`,
      );
    const before = await dump();
    await f.orm.em.fork().transactional((em) => rebuildWriteState(em, f.ctx.store));
    expect(await dump()).toEqual(before);
  });
});
