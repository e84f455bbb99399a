import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { body, expectError } from '@oan/testing';
import { internalCallHeaders } from '@oan/auth';
import { join, JWT_SECRET, startAuthFleet, type AuthFleet } from './helpers.ts';

let fleet: AuthFleet;
beforeAll(async () => {
  fleet = await startAuthFleet();
});
afterAll(async () => fleet?.close());

const DSH = '@openagentnetwork/dsh-plugin';
const notice = (accountId: string, installed = '0.1.4', latest = '0.1.5', connector = DSH) =>
  fleet.app.inject({
    method: 'POST',
    url: '/internal/connector-notices',
    headers: internalCallHeaders(JWT_SECRET),
    payload: { accountId, connector, installed, latest },
  });
const notified = async (res: Awaited<ReturnType<typeof notice>>) => {
  expect(res.statusCode).toBe(200);
  return body<{ notified: boolean }>(res).notified;
};

describe('a connector-outdated notice, recorded once per account and version', () => {
  it('is recorded the first time for (connector, latest) and not again, whatever the installed version', async () => {
    const { user } = await join(fleet);
    expect(await notified(await notice(user.id))).toBe(true);
    expect(await notified(await notice(user.id))).toBe(false);
    expect(await notified(await notice(user.id, '0.1.3'))).toBe(false);
    const events = await sql<{ data: unknown }>(
      fleet.orm.em.fork(),
      `select data from auth.events where stream_id = ? and type = 'ConnectorOutdatedNoticed'`,
      [`account-${user.id}`],
    );
    expect(events.map((e) => e.data)).toEqual([
      {
        accountId: user.id,
        connector: DSH,
        installed: '0.1.4',
        latest: '0.1.5',
        noticedAt: expect.any(String),
      },
    ]);
  });

  it('is recorded again for a newer latest release and for another connector', async () => {
    const { user } = await join(fleet);
    expect(await notified(await notice(user.id))).toBe(true);
    expect(await notified(await notice(user.id, '0.1.5', '0.1.6'))).toBe(true);
    expect(await notified(await notice(user.id, '0.2.0', '0.2.8', '@openagentnetwork/openclaw-plugin'))).toBe(
      true,
    );
  });

  it('is recorded once when the same notice races', async () => {
    const { user } = await join(fleet);
    const answers = await Promise.all(Array.from({ length: 6 }, () => notice(user.id)));
    expect((await Promise.all(answers.map(notified))).filter(Boolean)).toHaveLength(1);
  });

  it('is a 404 for an unknown account', async () => {
    expectError(await notice('00000000-0000-5000-8000-000000000000'), 404, { code: 'NOT_FOUND' });
  });
});

describe('a connector-outdated notice without the internal credential', () => {
  it.each([
    ['no header', {}],
    ['a wrong secret', { 'x-oan-internal': 'x'.repeat(64) }],
    ['the secret of another key', internalCallHeaders('another-secret-another-secret-another')],
    ['an empty header', { 'x-oan-internal': '' }],
  ])('with %s is a 401 and records nothing, whatever the body', async (_label, headers) => {
    const { user } = await join(fleet);
    const count = async () =>
      (await sql(fleet.orm.em.fork(), `select 1 from auth.events where type = 'ConnectorOutdatedNoticed'`))
        .length;
    const before = await count();
    for (const payload of [
      { accountId: user.id, connector: DSH, installed: '0.1.4', latest: '0.1.5' },
      { bad: true },
    ]) {
      const res = await fleet.app.inject({
        method: 'POST',
        url: '/internal/connector-notices',
        headers,
        payload,
      });
      expectError(res, 401, 'UNAUTHORIZED');
    }
    expect(await count()).toBe(before);
  });
});

describe('a runtime-job-waiting notice (the runtimes takeover sweep)', () => {
  const job = (accountId: string, jobId = randomUUID()) => ({
    accountId,
    runtimeId: randomUUID(),
    runtimeName: 'desk',
    jobId,
    eventId: randomUUID(),
    eventSeq: '12',
    eventType: 'gofer_question',
    goferId: 'g1',
    reason: 'attempts_exhausted',
  });
  const post = (payload: unknown, headers: Record<string, string> = internalCallHeaders(JWT_SECRET)) =>
    fleet.app.inject({
      method: 'POST',
      url: '/internal/runtime-notices',
      headers,
      payload: payload as object,
    });
  const recorded = (accountId: string) =>
    sql<{ data: Record<string, unknown> }>(
      fleet.orm.em.fork(),
      `select data from auth.events where stream_id = ? and type = 'RuntimeJobWaitingNoticed'`,
      [`account-${accountId}`],
    );

  it('is recorded once per job, however often it is asked or raced', async () => {
    const { user } = await join(fleet);
    const first = job(user.id);
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(first)));
    expect((await Promise.all(answers.map(notified))).filter(Boolean)).toHaveLength(1);
    expect(await notified(await post(first))).toBe(false);
    expect(await notified(await post({ ...job(user.id), goferId: null, reason: 'no_live_worker' }))).toBe(
      true,
    );
    const events = await recorded(user.id);
    expect(events.map((e) => e.data)).toEqual([
      { ...first, noticedAt: expect.any(String) },
      expect.objectContaining({ goferId: null, reason: 'no_live_worker' }),
    ]);
  });

  it('is a 401 without the internal credential and a 400 for a malformed body, recording nothing', async () => {
    const { user } = await join(fleet);
    expectError(await post(job(user.id), {}), 401, 'UNAUTHORIZED');
    expectError(await post({ ...job(user.id), reason: 'bored' }), 400, 'VALIDATION_ERROR');
    expectError(await post({ ...job(user.id), extra: 1 }), 400, 'VALIDATION_ERROR');
    expect(await recorded(user.id)).toEqual([]);
  });
});
