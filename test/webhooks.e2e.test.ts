import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, TestConnector, TestFleet, waitFor, type JoinedAccount } from '@oan/testing';
import { WebhookReceiver } from './webhookReceiver.ts';

/**
 * Signed webhooks through the edge, delivered to a real receiver on loopback. The
 * schedule is shortened (2 s timeout, retries from 200 ms, disabled after 6 s) so it runs in seconds.
 */
let fleet: TestFleet;
let receiver: WebhookReceiver;
let db: pg.Client;
const FORBIDDEN = '{"error":"Forbidden","code":"FORBIDDEN"}';

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  fleet = await TestFleet.start({
    env: {
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_RETRY_MAX_MS: '1000',
      WEBHOOK_GIVE_UP_MS: '6000',
      WEBHOOK_POLL_MS: '200',
    },
  });
  db = new pg.Client({ connectionString: fleet.env.DATABASE_URL });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await fleet?.stop();
  await receiver?.close();
});

interface Created {
  id: string;
  url: string;
  description?: string;
  secret: string;
  createdAt: string;
}

let n = 0;
async function account(): Promise<{ acc: JoinedAccount; c: TestConnector }> {
  const acc = await joinAccount(fleet.url, fleet.mailbox, `webhooks-${++n}-${fleet.id}@example.com`);
  return { acc, c: new TestConnector({ baseUrl: fleet.url, token: acc.apiKey }) };
}

/** The account's stored envelopes after `since`, in seq order: the exact bytes a webhook must carry. */
async function stored(
  accountId: string,
  since = 0n,
): Promise<{ seq: bigint; eventId: string; envelope: string }[]> {
  const r = await db.query<{ seq: string; event_id: string; envelope: string }>(
    'select seq::text as seq, event_id, envelope from read.oan_event where account_id = $1 and seq > $2 order by oan_event.seq',
    [accountId, since.toString()],
  );
  return r.rows.map((row) => ({ seq: BigInt(row.seq), eventId: row.event_id, envelope: row.envelope }));
}

const cursor = async (c: TestConnector) =>
  BigInt((await c.rest<{ seq: string }>('GET', '/events/cursor')).body.seq);

/** Makes `count` chat turns on a fresh Gofer: each is at least one envelope for the account. */
async function produce(c: TestConnector, count: number): Promise<void> {
  const { goferId } = (await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' })).body;
  for (let i = 0; i < count; i++) {
    const posted = await c.rest('POST', `/gofers/${goferId}/chat/messages`, { content: `Hello number ${i}` });
    expect(posted.status).toBe(202);
  }
}

/**
 * Waits until every envelope of the account after `since` (at least `min`) is acknowledged at `path`
 * and no more arrive for a moment (the Gofer's replies come asynchronously); returns them.
 */
async function settled(path: string, accountId: string, since: bigint, min: number, timeoutMs = 30_000) {
  let last = -1;
  return waitFor(
    async () => {
      const rows = await stored(accountId, since);
      const done = rows.length >= min && acknowledged(path).length === rows.length && rows.length === last;
      last = rows.length;
      return done ? rows : undefined;
    },
    { timeoutMs, intervalMs: 700, what: `every envelope acknowledged at ${path}` },
  );
}

/** The 2xx-answered bodies at `path`, in the order received. */
const acknowledged = (path: string) =>
  receiver
    .at(path)
    .filter((r) => r.answered !== undefined && r.answered < 300)
    .map((r) => r.body);

describe('registering webhooks through the edge', () => {
  let owner: { acc: JoinedAccount; c: TestConnector };
  let other: { acc: JoinedAccount; c: TestConnector };
  beforeAll(async () => {
    [owner, other] = await Promise.all([account(), account()]);
  });

  it('answers 201 with the secret once, lists without it, and refuses a fourth with 409', async () => {
    const first = await owner.c.rest<Created>('POST', '/webhooks', {
      url: receiver.url('/reg/1'),
      description: 'first',
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ url: receiver.url('/reg/1'), description: 'first' });
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(first.body.secret.slice(6), 'base64').length).toBe(32);
    expect(new Date(first.body.createdAt).toISOString()).toBe(first.body.createdAt);
    // A JWT of the account is the same account.
    const byJwt = new TestConnector({ baseUrl: fleet.url, token: owner.acc.jwt });
    expect((await byJwt.rest('POST', '/webhooks', { url: receiver.url('/reg/2') })).status).toBe(201);
    expect((await owner.c.rest('POST', '/webhooks', { url: receiver.url('/reg/3') })).status).toBe(201);
    const fourth = await owner.c.rest('POST', '/webhooks', { url: receiver.url('/reg/4') });
    expect(fourth.status).toBe(409);
    expect(fourth.body).toEqual({ error: expect.any(String), code: 'WEBHOOK_LIMIT_REACHED' });

    const list = await byJwt.rest<Record<string, unknown>[]>('GET', '/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.map((w) => w.url)).toEqual(['/reg/1', '/reg/2', '/reg/3'].map((p) => receiver.url(p)));
    expect(list.text).not.toContain('whsec_');
    expect(list.body[0]).toEqual({
      id: first.body.id,
      url: receiver.url('/reg/1'),
      description: 'first',
      createdAt: first.body.createdAt,
      disabledAt: null,
    });
    // Another account sees none of them.
    expect((await other.c.rest('GET', '/webhooks')).body).toEqual([]);

    expect((await owner.c.rest('DELETE', `/webhooks/${first.body.id}`)).status).toBe(204);
    expect((await owner.c.rest('POST', '/webhooks', { url: receiver.url('/reg/4') })).status).toBe(201);
  });

  it('answers a foreign, unknown or malformed id with the byte-identical 403', async () => {
    const mine = await owner.c.rest<Created[]>('GET', '/webhooks');
    const id = mine.body[0]!.id;
    for (const path of [
      `/webhooks/${id}`,
      '/webhooks/00000000-0000-4000-8000-000000000000',
      '/webhooks/not-an-id',
    ]) {
      const del = await other.c.rest('DELETE', path);
      expect([del.status, del.text]).toEqual([403, FORBIDDEN]);
      const deliveries = await other.c.rest('GET', `${path}/deliveries`);
      expect([deliveries.status, deliveries.text]).toEqual([403, FORBIDDEN]);
    }
    expect((await owner.c.rest('GET', `/webhooks/${id}/deliveries`)).status).toBe(200);
    expect((await owner.c.rest<Created[]>('GET', '/webhooks')).body.length).toBe(3);
  });

  it('refuses bad input with 400 VALIDATION_ERROR and a missing credential with 401', async () => {
    for (const body of [
      {},
      { url: 'not a url' },
      { url: 'ftp://example.com/hook' },
      { url: 42 },
      { url: receiver.url('/x'), description: 'x'.repeat(501) },
      { url: 'http://10.0.0.1/hook' },
      { url: 'http://169.254.169.254/latest/meta-data' },
    ]) {
      const res = await other.c.rest<{ code: string; error: string }>('POST', '/webhooks', body);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'error']);
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    const anonymous = await fetch(`${fleet.url}/api/v1/webhooks`);
    expect(anonymous.status).toBe(401);
  });
});

describe('an account with a webhook', () => {
  it('has each envelope POSTed once, in seq order, signed so the Standard Webhooks library verifies it', async () => {
    const { acc, c } = await account();
    const since = await cursor(c);
    const created = (await c.rest<Created>('POST', '/webhooks', { url: receiver.url('/order') })).body;
    await produce(c, 4);
    const want = await settled('/order', acc.userId, since, 5);
    const got = receiver.at('/order');
    expect(got.map((r) => r.body)).toEqual(want.map((w) => w.envelope));
    const wh = new Webhook(created.secret);
    for (const [i, r] of got.entries()) {
      const headers = {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      };
      expect(wh.verify(r.body, headers)).toEqual(JSON.parse(want[i]!.envelope));
      expect(headers['webhook-id']).toBe(want[i]!.eventId);
      expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
      expect(r.headers['content-type']).toBe('application/json');
    }
    // Another secret does not verify.
    const forged = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    expect(() =>
      forged.verify(got[0]!.body, {
        'webhook-id': String(got[0]!.headers['webhook-id']),
        'webhook-timestamp': String(got[0]!.headers['webhook-timestamp']),
        'webhook-signature': String(got[0]!.headers['webhook-signature']),
      }),
    ).toThrow();

    const deliveries = await c.rest<Record<string, unknown>[]>('GET', `/webhooks/${created.id}/deliveries`);
    expect(deliveries.body.length).toBe(want.length);
    expect(deliveries.body[0]).toMatchObject({
      eventId: want.at(-1)!.eventId,
      seq: want.at(-1)!.seq.toString(),
      attempt: 1,
      statusCode: 200,
      error: null,
      nextRetryAt: null,
    });
  });
});

describe('an endpoint that answers 500, then not in time, then 200', () => {
  it('gets the first envelope again until it is acknowledged, then the rest in order', async () => {
    const { acc, c } = await account();
    const since = await cursor(c);
    receiver.script('/retry', [{ status: 500 }, 'hang', { status: 200 }]);
    const created = (await c.rest<Created>('POST', '/webhooks', { url: receiver.url('/retry') })).body;
    await produce(c, 2);
    const want = await settled('/retry', acc.userId, since, 3);
    const got = receiver.at('/retry');
    const first = want[0]!.envelope;
    expect(got.slice(0, 3).map((r) => r.body)).toEqual([first, first, first]);
    expect(got.slice(0, 3).map((r) => r.headers['webhook-id'])).toEqual(Array(3).fill(want[0]!.eventId));
    expect(acknowledged('/retry')).toEqual(want.map((w) => w.envelope));
    // Backoff: the retries are spaced, not immediate.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(90);

    const attempts = (
      await c.rest<
        { attempt: number; statusCode: number | null; error: string | null; nextRetryAt: string | null }[]
      >('GET', `/webhooks/${created.id}/deliveries`)
    ).body.reverse();
    expect(attempts[0]).toMatchObject({ attempt: 1, statusCode: 500, error: null });
    expect(attempts[0]!.nextRetryAt).not.toBeNull();
    expect(attempts[1]).toMatchObject({ attempt: 2, statusCode: null, error: 'no answer within 2000 ms' });
    expect(attempts[2]).toMatchObject({ attempt: 3, statusCode: 200, nextRetryAt: null });
    expect(attempts.slice(3).every((a) => a.attempt === 1 && a.statusCode === 200)).toBe(true);
  });
});

describe('an endpoint that fails for the whole give-up period', () => {
  it('is disabled, and the account gets a webhook_disabled system_notice in GET /events', async () => {
    const { acc, c } = await account();
    receiver.script('/down', [{ status: 503 }]);
    const created = (await c.rest<Created>('POST', '/webhooks', { url: receiver.url('/down') })).body;
    const since = await cursor(c);
    await produce(c, 1);
    const listed = await waitFor(
      async () => {
        const [w] = (await c.rest<{ disabledAt: string | null }[]>('GET', '/webhooks')).body;
        return w?.disabledAt ? w : undefined;
      },
      { timeoutMs: 30_000, what: 'the endpoint to be disabled' },
    );
    const attempts = receiver.at('/down');
    expect(attempts.length).toBeGreaterThan(2);
    expect(Date.parse(listed.disabledAt!) - attempts[0]!.at).toBeGreaterThanOrEqual(5500);
    const notice = await waitFor(
      async () =>
        (await c.rest<OanEventEnvelope[]>('GET', `/events?since=${since}`)).body.find(
          (e) => e.type === 'system_notice' && e.payload.kind === 'webhook_disabled',
        ),
      { timeoutMs: 20_000, what: 'the webhook_disabled notice' },
    );
    expect(notice).toMatchObject({
      source: 'platform',
      payload: {
        kind: 'webhook_disabled',
        webhookId: created.id,
        url: receiver.url('/down'),
        reason: 'HTTP 503',
      },
    });
    // Nothing more is sent to it, the notice included.
    const count = receiver.at('/down').length;
    const before = (await stored(acc.userId, since)).length;
    await produce(c, 1);
    await waitFor(async () => (await stored(acc.userId, since)).length > before, { what: 'more envelopes' });
    await new Promise((r) => setTimeout(r, 1000)); // a settle window: proving an absence
    expect(receiver.at('/down').length).toBe(count);
  });
});

describe('the delivering process killed (kill -9) while a delivery is in flight', () => {
  it('loses nothing and never sends an acknowledged envelope again', async () => {
    const { acc, c } = await account();
    const since = await cursor(c);
    // The third request is held unanswered: auth dies while it is in flight.
    receiver.script('/crash', [{ status: 200 }, { status: 200 }, 'hang', { status: 200 }]);
    await c.rest<Created>('POST', '/webhooks', { url: receiver.url('/crash') });
    await produce(c, 3);
    await waitFor(() => receiver.at('/crash').length >= 3, { timeoutMs: 30_000, what: 'the held delivery' });
    const held = receiver.at('/crash')[2]!;
    await fleet.kill('auth');
    await fleet.restart('auth');
    await produce(c, 2);
    const want = await settled('/crash', acc.userId, since, 5, 40_000);
    const got = receiver.at('/crash');
    // Every envelope acknowledged exactly once, in order; the only repeat is the unanswered one.
    expect(acknowledged('/crash')).toEqual(want.map((w) => w.envelope));
    expect(got.length).toBe(want.length + 1);
    expect(held.answered).toBeUndefined();
    expect(got[3]!.body).toBe(held.body);
  });
});

describe('every other process kind killed (kill -9) and restarted while a delivery is held', () => {
  it('loses nothing and never sends an acknowledged envelope again', async () => {
    const { acc, c } = await account();
    const since = await cursor(c);
    await c.rest<Created>('POST', '/webhooks', { url: receiver.url('/kinds') });
    const kinds = [
      'projector',
      'outbox',
      'gateway1',
      'gateway2',
      'gofers',
      'matching',
      'conversations',
      'edge',
    ] as const;
    for (const kind of kinds) {
      // The next request is held past the timeout (2 s), while `kind` dies and comes back.
      receiver.script('/kinds', ['hang', { status: 200 }]);
      const before = receiver.at('/kinds').length;
      await produce(c, 1);
      await waitFor(() => receiver.at('/kinds').length > before, {
        timeoutMs: 30_000,
        what: `a delivery (${kind})`,
      });
      await fleet.kill(kind);
      await fleet.restart(kind);
      // The held request is sent again (answered 200) before the next one is held: a process that is
      // back within the timeout would otherwise see the same delivery held again and again, until the
      // endpoint had failed for the whole give-up period (6 s here) and was disabled.
      await waitFor(() => receiver.at('/kinds').length > before + 1, {
        timeoutMs: 30_000,
        what: `the held delivery sent again (${kind})`,
      });
    }
    await produce(c, 1);
    const want = await settled('/kinds', acc.userId, since, kinds.length + 1, 40_000);
    const got = receiver.at('/kinds');
    expect(acknowledged('/kinds')).toEqual(want.map((w) => w.envelope));
    // The held requests were answered by nobody: each was sent once more, nothing else twice.
    const unanswered = got.filter((r) => r.answered === undefined);
    expect(unanswered.length).toBeGreaterThan(0);
    expect(got.length).toBe(want.length + unanswered.length);
  });
});
