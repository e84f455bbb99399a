import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, joinAccount, png, TestFleet, type JoinedAccount } from '@oan/testing';

/** `Idempotency-Key` on POSTs, through the edge, with races. */
let fleet: TestFleet;
let a: JoinedAccount;
let b: JoinedAccount;

beforeAll(async () => {
  fleet = await TestFleet.start();
  [a, b] = await Promise.all([
    joinAccount(fleet.url, fleet.mailbox, `idem-a-${fleet.id}@example.com`),
    joinAccount(fleet.url, fleet.mailbox, `idem-b-${fleet.id}@example.com`),
  ]);
});
afterAll(async () => {
  await fleet?.stop();
});

interface Answer {
  status: number;
  text: string;
  type: string | null;
  replayed: string | null;
  headers: Headers;
}

async function post(path: string, token: string | null, body: unknown, key?: string): Promise<Answer> {
  const res = await fetch(`${fleet.url}/api/v1${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    text: await res.text(),
    type: res.headers.get('content-type'),
    replayed: res.headers.get('idempotent-replayed'),
    headers: res.headers,
  };
}

async function goferCount(token: string): Promise<number> {
  const res = await fetch(`${fleet.url}/api/v1/gofers`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as unknown[]).length;
}

describe('a POST without Idempotency-Key', () => {
  it('is unchanged: each one has its effect, and no new header is sent', async () => {
    const before = await goferCount(a.apiKey);
    const one = await post('/gofers', a.apiKey, { locale: 'en' });
    const two = await post('/gofers', a.apiKey, { locale: 'en' });
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(await goferCount(a.apiKey)).toBe(before + 2);
    for (const name of ['idempotent-replayed', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) {
      expect(one.headers.get(name), name).toBeNull();
    }
  });
});

describe('two identical POSTs with one key, raced', () => {
  it('have exactly one effect; the other is a 409 or the same answer replayed', async () => {
    const key = randomUUID();
    const before = await goferCount(a.apiKey);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post('/gofers', a.apiKey, { locale: 'en' }, key)),
    );
    expect(await goferCount(a.apiKey)).toBe(before + 1);
    const created = answers.filter((x) => x.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((x) => x.text)).size).toBe(1);
    for (const x of answers.filter((y) => y.status !== 201)) {
      expect(x.status).toBe(409);
      expect(JSON.parse(x.text)).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_USE' });
    }
    // After completion every retry is the first answer again, byte for byte, without a second effect.
    const again = await post('/gofers', a.apiKey, { locale: 'en' }, key);
    expect(again).toMatchObject({ status: 201, text: created[0]!.text, type: created[0]!.type });
    expect(again.replayed).toBe('true');
    expect(await goferCount(a.apiKey)).toBe(before + 1);
  });
});

describe('a key already used', () => {
  it('with another body is a 422 IDEMPOTENCY_KEY_REUSED, with no effect', async () => {
    const key = randomUUID();
    expect((await post('/gofers', a.apiKey, { locale: 'en' }, key)).status).toBe(201);
    const before = await goferCount(a.apiKey);
    const other = await post('/gofers', a.apiKey, { locale: 'de' }, key);
    expect(other.status).toBe(422);
    expect(JSON.parse(other.text)).toEqual({ error: expect.any(String), code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(await goferCount(a.apiKey)).toBe(before);
  });

  it('by the same account through its JWT is the same record as through its API key', async () => {
    const key = randomUUID();
    const first = await post('/gofers', a.apiKey, { locale: 'en' }, key);
    const viaJwt = await post('/gofers', a.jwt, { locale: 'en' }, key);
    expect(viaJwt).toMatchObject({ status: 201, text: first.text, replayed: 'true' });
  });

  it('by another account is independent', async () => {
    const key = randomUUID();
    const before = await goferCount(b.apiKey);
    const mine = await post('/gofers', a.apiKey, { locale: 'en' }, key);
    const theirs = await post('/gofers', b.apiKey, { locale: 'en' }, key);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.replayed).toBeNull();
    expect(theirs.text).not.toBe(mine.text);
    expect(await goferCount(b.apiKey)).toBe(before + 1);
  });

  it('whose first answer was a 4xx answers that 4xx again', async () => {
    const key = randomUUID();
    const path = `/gofers/${randomUUID()}/chat/messages`;
    const first = await post(path, a.apiKey, { content: 'hi' }, key);
    expect(first.status).toBeGreaterThanOrEqual(400);
    expect(first.status).toBeLessThan(500);
    expect(await post(path, a.apiKey, { content: 'hi' }, key)).toMatchObject({
      status: first.status,
      text: first.text,
      replayed: 'true',
    });
  });
});

describe('an upload retried with the same key', () => {
  const upload = async (goferId: string, bytes: Buffer, key: string) => {
    // Each call builds a new random multipart boundary, as a client's retry does.
    const { payload, headers } = form('photo.png', 'image/png', bytes);
    const res = await fetch(`${fleet.url}/api/v1/gofers/${goferId}/photos`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${a.apiKey}`, 'idempotency-key': key },
      body: payload,
    });
    return { status: res.status, text: await res.text(), replayed: res.headers.get('idempotent-replayed') };
  };

  it('is the first answer again despite a new boundary; another file under the key is a 422', async () => {
    const goferId = JSON.parse((await post('/gofers', a.apiKey, { locale: 'en' })).text).goferId as string;
    const key = randomUUID();
    const first = await upload(goferId, png(2, 3), key);
    expect(first.status).toBe(201);
    expect(await upload(goferId, png(2, 3), key)).toEqual({
      status: 201,
      text: first.text,
      replayed: 'true',
    });
    const other = await upload(goferId, png(4, 5), key);
    expect(other.status).toBe(422);
    expect(JSON.parse(other.text)).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
  });
});

describe('a bad Idempotency-Key', () => {
  it.each([
    ['too long', 'k'.repeat(256)],
    ['empty', '""'],
    ['two keys', 'a, b'],
  ])('%s is a 400 VALIDATION_ERROR, with no effect', async (_what, key) => {
    const before = await goferCount(a.apiKey);
    const res = await post('/gofers', a.apiKey, { locale: 'en' }, key);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await goferCount(a.apiKey)).toBe(before);
  });

  it('does not hide a missing credential: the 401 of v1 comes first', async () => {
    const res = await post('/gofers', null, { locale: 'en' }, 'k'.repeat(300));
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'UNAUTHORIZED' });
  });
});

describe('a key whose first request failed with a 5xx', () => {
  it('is not kept: the retry runs once the owner is back', async () => {
    const key = randomUUID();
    await fleet.kill('gofers');
    try {
      const failed = await post('/gofers', a.apiKey, { locale: 'en' }, key);
      expect(failed.status).toBe(503);
    } finally {
      await fleet.restart('gofers');
    }
    const before = await goferCount(a.apiKey);
    const retried = await post('/gofers', a.apiKey, { locale: 'en' }, key);
    expect(retried.status).toBe(201);
    expect(retried.replayed).toBeNull();
    expect(await goferCount(a.apiKey)).toBe(before + 1);
  });
});
