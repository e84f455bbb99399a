import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRuntimesWorld, type Caller, type RuntimesWorld } from './helpers.ts';

let w: RuntimesWorld;
beforeAll(async () => {
  w = await startRuntimesWorld();
});
afterAll(async () => {
  await w?.close();
});

const policy = { types: ['gofer_question', 'gofer_message'] };
const NOT_FOUND = '{"error":"Runtime not found","code":"NOT_FOUND"}';

async function register(c: Caller, name = 'desk', p: Record<string, unknown> = policy) {
  return w.call(c, 'POST', '/runtimes', { name, policy: p });
}

describe('registering a runtime', () => {
  it('answers 201 with the defaults, then 200 and the same runtime for the same settings', async () => {
    const c = await w.account();
    const first = await register(c);
    expect(first.statusCode).toBe(201);
    const rt = first.json();
    expect(rt).toMatchObject({
      name: 'desk',
      policy: { types: ['gofer_message', 'gofer_question'], maxAttempts: 3, leaseSeconds: 60 },
      version: 1,
      state: 'active',
    });
    // the same policy written another way (order, a repeat, the defaults spelled out) is the same
    const again = await register(c, 'desk', {
      types: ['gofer_message', 'gofer_question', 'gofer_message'],
      maxAttempts: 3,
      leaseSeconds: 60,
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(rt);
  });

  it('refuses the same name with other settings (409 RUNTIME_EXISTS) and changes nothing', async () => {
    const c = await w.account();
    const rt = (await register(c)).json();
    const other = await register(c, 'desk', { types: ['match_request'] });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({ error: expect.any(String), code: 'RUNTIME_EXISTS' });
    expect((await w.call(c, 'GET', '/runtimes')).json()).toEqual([rt]);
  });

  it.each([
    ['a type without a reply', { types: ['session_summary'] }],
    ['no type', { types: [] }],
    ['a lease under 5 s', { types: ['gofer_message'], leaseSeconds: 4 }],
    ['a lease over an hour', { types: ['gofer_message'], leaseSeconds: 3601 }],
    ['no attempt', { types: ['gofer_message'], maxAttempts: 0 }],
    ['more than 20 attempts', { types: ['gofer_message'], maxAttempts: 21 }],
    ['an unknown key', { types: ['gofer_message'], priority: 1 }],
  ])('refuses %s with a 400 and creates nothing', async (_, p) => {
    const c = await w.account();
    const res = await register(c, 'bad', p);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: expect.any(String), code: 'VALIDATION_ERROR' });
    expect((await w.call(c, 'GET', '/runtimes')).json()).toEqual([]);
  });

  it.each(['http://agent.example/oan', 'https://127.0.0.1/oan', 'https://localhost/oan'])(
    'refuses the endpoint %s without the QA switch, with a 400',
    async (endpoint) => {
      const c = await w.account();
      const res = await w.call(c, 'POST', '/runtimes', { name: 'api', policy, endpoint });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('VALIDATION_ERROR');
      expect((await w.call(c, 'GET', '/runtimes')).json()).toEqual([]);
    },
  );

  it('allows 8 per account: a ninth is 429 RUNTIME_LIMIT_REACHED, even when racing', async () => {
    const c = await w.account();
    const all = await Promise.all(Array.from({ length: 12 }, (_, i) => register(c, `r${i}`)));
    expect(all.filter((r) => r.statusCode === 201)).toHaveLength(8);
    const refused = all.filter((r) => r.statusCode !== 201);
    expect(refused.map((r) => r.statusCode)).toEqual([429, 429, 429, 429]);
    expect(refused[0]!.json()).toEqual({ error: expect.any(String), code: 'RUNTIME_LIMIT_REACHED' });
    expect((await w.call(c, 'GET', '/runtimes')).json()).toHaveLength(8);
  });
});

describe('reading and deleting', () => {
  it('lists, reads and deletes its own runtime; a deleted one is the unknown 404', async () => {
    const c = await w.account();
    const rt = (await register(c)).json();
    expect((await w.call(c, 'GET', `/runtimes/${rt.runtimeId}`)).json()).toEqual(rt);
    expect((await w.call(c, 'DELETE', `/runtimes/${rt.runtimeId}`)).statusCode).toBe(204);
    const gone = await w.call(c, 'GET', `/runtimes/${rt.runtimeId}`);
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toBe(NOT_FOUND);
    expect((await w.call(c, 'DELETE', `/runtimes/${rt.runtimeId}`)).body).toBe(NOT_FOUND);
    // the name is free again
    expect((await register(c)).statusCode).toBe(201);
  });

  it("answers another account's runtime byte for byte as an unknown id, and changes nothing", async () => {
    const owner = await w.account();
    const stranger = await w.account();
    const rt = (await register(owner)).json();
    const job = { leaseOwner: 'w', version: 1, outcome: 'released' };
    const probes: ['GET' | 'POST' | 'DELETE', string, unknown?][] = [
      ['GET', ''],
      ['DELETE', ''],
      ['POST', '/configure', { version: 1, policy: { types: ['match_request'] } }],
      ['POST', '/claim', { worker: 'thief' }],
      ['GET', '/jobs'],
      ['POST', `/jobs/${randomUUID()}/heartbeat`, { leaseOwner: 'w', version: 1 }],
      ['POST', `/jobs/${randomUUID()}/finish`, job],
    ];
    for (const [method, tail, body] of probes) {
      const foreign = await w.call(stranger, method, `/runtimes/${rt.runtimeId}${tail}`, body);
      const unknown = await w.call(stranger, method, `/runtimes/${randomUUID()}${tail}`, body);
      const malformed = await w.call(stranger, method, `/runtimes/not-an-id${tail}`, body);
      for (const res of [foreign, unknown, malformed]) {
        expect(res.statusCode, `${method} ${tail}`).toBe(404);
        expect(res.body).toBe(NOT_FOUND);
      }
    }
    expect((await w.call(owner, 'GET', `/runtimes/${rt.runtimeId}`)).json()).toEqual(rt);
  });

  it('refuses a request without a credential', async () => {
    const res = await w.app.inject({ method: 'GET', url: '/api/v1/runtimes' });
    expect(res.statusCode).toBe(401);
  });
});

describe('configure', () => {
  it('is a compare-and-set on the version', async () => {
    const c = await w.account();
    const rt = (await register(c)).json();
    const next = { types: ['gofer_question'], leaseSeconds: 30 };
    const ok = await w.call(c, 'POST', `/runtimes/${rt.runtimeId}/configure`, { version: 1, policy: next });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ version: 2, policy: { types: ['gofer_question'], leaseSeconds: 30 } });
    const stale = await w.call(c, 'POST', `/runtimes/${rt.runtimeId}/configure`, {
      version: 1,
      policy: { types: ['match_request'] },
    });
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toEqual({ error: expect.any(String), code: 'VERSION_CONFLICT' });
    expect((await w.call(c, 'GET', `/runtimes/${rt.runtimeId}`)).json()).toEqual(ok.json());
  });

  it('lets one of two racing writers of the same version win', async () => {
    const c = await w.account();
    const rt = (await register(c)).json();
    const race = await Promise.all(
      ['gofer_question', 'match_request', 'relay_message'].map((t) =>
        w.call(c, 'POST', `/runtimes/${rt.runtimeId}/configure`, { version: 1, policy: { types: [t] } }),
      ),
    );
    expect(race.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
    expect((await w.call(c, 'GET', `/runtimes/${rt.runtimeId}`)).json().version).toBe(2);
  });

  it('drops the queued jobs the new policy does not want and keeps a leased one', async () => {
    const c = await w.account();
    const rt = (await register(c)).json();
    await w.envelope(c.accountId, { type: 'gofer_message', goferId: 'g1' });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await w.envelope(c.accountId, { type: 'gofer_message', goferId: 'g1' });
    const claimed = (await w.call(c, 'POST', `/runtimes/${rt.runtimeId}/claim`, { worker: 'w1' })).json();
    expect(claimed.job.event.type).toBe('gofer_message');
    const res = await w.call(c, 'POST', `/runtimes/${rt.runtimeId}/configure`, {
      version: 1,
      policy: { types: ['gofer_question'] },
    });
    expect(res.statusCode).toBe(200);
    const jobs = (await w.call(c, 'GET', `/runtimes/${rt.runtimeId}/jobs`)).json<
      { type: string; state: string }[]
    >();
    expect(jobs.map((j) => `${j.type}:${j.state}`)).toEqual([
      'gofer_message:leased',
      'gofer_question:queued',
      'gofer_message:dropped',
    ]);
  });

  it('judges what was stored before the change by the old policy, and what comes after by the new', async () => {
    const c = await w.account();
    const rt = (await register(c, 'desk', { types: ['gofer_message'] })).json<{ runtimeId: string }>();
    const before = await w.envelope(c.accountId, { type: 'gofer_message', goferId: 'g1' });
    await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    const res = await w.call(c, 'POST', `/runtimes/${rt.runtimeId}/configure`, {
      version: 1,
      policy: { types: ['gofer_question'] },
    });
    expect(res.statusCode).toBe(200);
    const after = await w.envelope(c.accountId, { type: 'gofer_question', goferId: 'g1' });
    await w.envelope(c.accountId, { type: 'gofer_message', goferId: 'g1' });
    const jobs = (await w.call(c, 'GET', `/runtimes/${rt.runtimeId}/jobs`)).json<
      { eventId: string; state: string }[]
    >();
    expect(jobs.map((j) => [j.eventId, j.state])).toEqual([
      [before.eventId, 'dropped'],
      [after.eventId, 'queued'],
    ]);
  });
});
