import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, sql } from '@oan/db';
import { threadKey, threadStreamId, type ThreadEvent, type ThreadSide } from '@oan/domain';
import { threadDecider, type ThreadCommand } from '@oan/matching';
import { readModelMigrations as projectorMigrations } from '@oan/readmodels';
import { projections, type DomainEvent } from '@oan/readmodels';
import { projectDomainEvents, writeEnvelopes, type CommittedEnvelope } from '@oan/projector';
import { openDecisions } from '../src/http/openDecisions.ts';
import { openQuestions } from '../src/http/openQuestions.ts';
import {
  insertAccount,
  jwtFor,
  openFleet,
  startGateway,
  type Fleet,
  type RunningGateway,
} from './helpers.ts';

let fleet: Fleet;
let gw: RunningGateway;
const NOW = '2026-11-29T08:00:00.000Z';

beforeAll(async () => {
  fleet = await openFleet();
  // The projector owns read.threads, read.match_requests and read.gofers: its migrations create them.
  const setup = await openDatabase({ url: fleet.url, schema: 'projector', migrations: projectorMigrations });
  await setup.close(true);
  gw = await startGateway(fleet, { id: 'd1', openItems: [openQuestions, openDecisions], metrics: false });
});
afterAll(async () => {
  await gw?.close();
  await fleet?.close();
});

let position = 0n;
/** A thread driven through the matching decider, each step projected by both projector stages. */
function thread(events: ThreadEvent[] = []) {
  return {
    async run(command: ThreadCommand): Promise<CommittedEnvelope[]> {
      const state = events.reduce(threadDecider.evolve, threadDecider.initialState());
      const out = threadDecider.decide({ ...command, metadata: { now: NOW } }, state);
      events.push(...out);
      const first = events[0];
      if (first?.type !== 'ThreadProposed') throw new Error('no proposal');
      const domain: DomainEvent[] = out.map((e) => ({
        eventId: randomUUID(),
        type: e.type,
        streamId: threadStreamId(e.data.threadId),
        partitionKey: threadKey(first.data),
        occurredAt: NOW,
        position: ++position,
        data: e.data as unknown as Record<string, unknown>,
      }));
      return fleet.orm.em.fork().transactional(async (em) => {
        const notes = await projectDomainEvents(em, domain, projections, {});
        return writeEnvelopes(em, notes);
      });
    },
  };
}

async function digest(accountId: string) {
  const res = await gw.app.inject({
    method: 'GET',
    url: '/api/v1/events/unresolved',
    headers: { authorization: `Bearer ${await jwtFor(accountId)}` },
  });
  expect(res.statusCode).toBe(200);
  return res.body;
}
const body = (envs: CommittedEnvelope[], decisions: number) =>
  `{"events":[${envs.map((e) => e.envelope).join(',')}],"summary":{"pendingQuestions":0,"goferCount":0,"decisions":${decisions}}}`;
const of = (envs: CommittedEnvelope[], accountId: string, type: string) =>
  envs.filter((e) => e.accountId === accountId && (JSON.parse(e.envelope) as { type: string }).type === type);

async function sides(): Promise<[ThreadSide, ThreadSide]> {
  const [x, y] = [await insertAccount(fleet.orm), await insertAccount(fleet.orm)];
  return [
    { goferId: randomUUID(), accountId: x, name: 'Acme Hiring', sourcePlatform: 'dsh' },
    { goferId: randomUUID(), accountId: y, name: 'Lin', sourcePlatform: 'openclaw' },
  ];
}

describe('GET /api/v1/events/unresolved with matching decisions', () => {
  it('lists pair_proposed until this side confirms, then the match_request until it is decided', async () => {
    const [x, y] = await sides();
    const t = thread();
    const proposed = await t.run({
      type: 'ProposePairing',
      data: { threadId: randomUUID(), mode: 'confirm', sides: [x, y], score: 0.5 },
    });
    const [toX] = of(proposed, x.accountId, 'pair_proposed');
    const [toY] = of(proposed, y.accountId, 'pair_proposed');
    expect(await digest(x.accountId)).toBe(body([toX!], 1));
    expect(await digest(y.accountId)).toBe(body([toY!], 1));

    await t.run({
      type: 'ConfirmPairing',
      data: { goferId: x.goferId, accountId: x.accountId, accepted: true },
    });
    expect(await digest(x.accountId)).toBe(body([], 0));
    expect(await digest(y.accountId)).toBe(body([toY!], 1));
    await t.run({
      type: 'ConfirmPairing',
      data: { goferId: y.goferId, accountId: y.accountId, accepted: true },
    });
    expect(await digest(y.accountId)).toBe(body([], 0));

    const requested = await t.run({
      type: 'RequestMatch',
      data: { requestId: randomUUID(), goferId: x.goferId, accountId: x.accountId },
    });
    const [request] = of(requested, y.accountId, 'match_request');
    expect(await digest(x.accountId)).toBe(body([], 0));
    expect(await digest(y.accountId)).toBe(body([request!], 1));

    const requestId = (JSON.parse(request!.envelope) as { payload: { requestId: string } }).payload.requestId;
    await t.run({ type: 'DecideMatchRequest', data: { requestId, accountId: y.accountId, accept: false } });
    expect(await digest(y.accountId)).toBe(body([], 0));
  });

  it('never lists an auto-pair (it carries no reply); a cross request decides the open request', async () => {
    const [x, y] = await sides();
    const t = thread();
    await t.run({
      type: 'ProposePairing',
      data: { threadId: randomUUID(), mode: 'auto', sides: [x, y], score: 0.5 },
    });
    expect(await digest(x.accountId)).toBe(body([], 0));
    expect(await digest(y.accountId)).toBe(body([], 0));
    const requested = await t.run({
      type: 'RequestMatch',
      data: { requestId: randomUUID(), goferId: y.goferId, accountId: y.accountId },
    });
    expect(await digest(x.accountId)).toBe(body(of(requested, x.accountId, 'match_request'), 1));
    await t.run({
      type: 'RequestMatch',
      data: { requestId: randomUUID(), goferId: x.goferId, accountId: x.accountId },
    });
    expect(await digest(x.accountId)).toBe(body([], 0));
  });

  it('drops items of a closed thread, and of a deleted Gofer, keeping seq order across items', async () => {
    const [x, y] = await sides();
    // A rejection closes the thread: the other side's pair_proposed no longer waits.
    const rejected = thread();
    await rejected.run({
      type: 'ProposePairing',
      data: { threadId: randomUUID(), mode: 'confirm', sides: [x, y], score: 0.5 },
    });
    await rejected.run({
      type: 'ConfirmPairing',
      data: { goferId: x.goferId, accountId: x.accountId, accepted: false },
    });
    expect(await digest(y.accountId)).toBe(body([], 0));

    // A second pair of the same accounts: an open request and an open proposal at once, in seq order.
    const x2: ThreadSide = { ...x, goferId: randomUUID() };
    const y2: ThreadSide = { ...y, goferId: randomUUID() };
    const y3: ThreadSide = { ...y, goferId: randomUUID() };
    const active = thread();
    await active.run({
      type: 'ProposePairing',
      data: { threadId: randomUUID(), mode: 'auto', sides: [x2, y2], score: 0.5 },
    });
    const req = await active.run({
      type: 'RequestMatch',
      data: { requestId: randomUUID(), goferId: x2.goferId, accountId: x2.accountId },
    });
    const waiting = thread();
    const prop = await waiting.run({
      type: 'ProposePairing',
      data: { threadId: randomUUID(), mode: 'confirm', sides: [x2, y3], score: 0.5 },
    });
    const open = [...of(req, y.accountId, 'match_request'), ...of(prop, y.accountId, 'pair_proposed')];
    expect(await digest(y.accountId)).toBe(body(open, 2));

    // y3's Gofer is deleted (its tombstone in read.gofers): its proposal leaves the digest at once.
    await sql(
      fleet.orm.em.fork(),
      `insert into read.gofers (id, account_id, chat_id, name, description, locale, source_platform,
         discovery_status, human_review_triggers, "values", demands, created_at, updated_at, deleted_at)
       values (?, ?, ?, 'G', '', 'en', 'other', 'in_discovery', '[]', '[]', '[]', now(), now(), now())`,
      [y3.goferId, y.accountId, randomUUID()],
    );
    expect(await digest(y.accountId)).toBe(body(open.slice(0, 1), 1));

    // The requester's Gofer is deleted: the thread closes and the open request is cancelled.
    await active.run({ type: 'CloseForDeletedGofer', data: { goferId: x2.goferId } });
    expect(await digest(y.accountId)).toBe(body([], 0));
  });
});
