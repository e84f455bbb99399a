import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { readModelMigrations as migrations } from '@oan/readmodels';
import { projections, type DomainEvent } from '@oan/readmodels';
import { projectDomainEvents } from '../src/stages/domain.ts';
import { toEnvelope } from '../src/notifications.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
let orm: MikroORM;
beforeAll(async () => {
  orm = await openDatabase({ url, schema: 'projector', migrations });
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

const account = randomUUID();
const goferId = randomUUID();
const at = (s: number) => `2026-11-29T09:00:${String(s).padStart(2, '0')}.000Z`;
let position = 0n;
const ev = (type: string, data: Record<string, unknown>): DomainEvent => ({
  eventId: randomUUID(),
  type,
  streamId: `gofer-${goferId}`,
  accountId: account,
  occurredAt: at(0),
  position: ++position,
  data: { goferId, accountId: account, ...data },
});
const msg = (id: string, role: string, content: string, extra: Record<string, unknown> = {}) =>
  ev('ChatMessageAdded', {
    chatId: 'chat-1',
    messageId: id,
    role,
    content,
    attachmentIds: [],
    kind: null,
    pairing: null,
    pendingQuery: false,
    responseConstraints: null,
    replyTo: null,
    createdAt: at(Number(id.slice(1))),
    ...extra,
  });

const history: DomainEvent[] = [
  ev('GoferCreated', {
    chatId: 'chat-1',
    locale: 'en',
    name: 'New Gofer',
    description: 'd',
    sourcePlatform: 'dsh',
    humanReviewTriggers: ['money'],
    createdAt: at(0),
  }),
  msg('m1', 'assistant', 'Hello!'),
  msg('m2', 'user', 'I want a backend engineer'),
  msg('m3', 'assistant', 'Shall I start?', {
    pendingQuery: true,
    responseConstraints: '{"format":"boolean"}',
    replyTo: 'm2',
  }),
  ev('GoferProfileUpdated', {
    name: 'Hiring Gofer',
    description: 'A team',
    values: ['remote'],
    demands: ['backend'],
    updatedAt: at(4),
  }),
  ev('GoferDiscoveryStatusChanged', { status: 'ready_for_pairing', changedAt: at(5) }),
];

const apply = (events: DomainEvent[]) =>
  orm.em.fork().transactional((em) => projectDomainEvents(em, events, projections, {}));
const snapshot = async () => ({
  gofers: await sql(orm.em.fork(), 'select * from read.gofers order by id'),
  messages: await sql(orm.em.fork(), 'select * from read.gofer_messages order by id'),
});

describe('the gofers projection', () => {
  it('turns assistant turns into gofer_message / gofer_question and never echoes the owner', async () => {
    const notes = await apply(history);
    const envs = notes.map((n, i) => toEnvelope(n, BigInt(i + 1)));
    expect(envs.map((e) => e.type)).toEqual(['gofer_message', 'gofer_question']);
    expect(envs[1]).toMatchObject({
      source: 'own_gofer',
      goferId,
      chatId: 'chat-1',
      reply: { method: 'POST', path: `/api/v1/gofers/${goferId}/chat/messages` },
      responseConstraints: { format: 'boolean' },
      payload: { messageId: 'm3', content: 'Shall I start?', createdAt: at(3) },
    });
    expect(envs[0]!.responseConstraints).toBeUndefined();
    const [g] = await sql<{ name: string; discovery_status: string; source_platform: string }>(
      orm.em.fork(),
      'select * from read.gofers',
    );
    expect(g).toMatchObject({
      name: 'Hiring Gofer',
      discovery_status: 'ready_for_pairing',
      source_platform: 'dsh',
    });
  });

  it('applied twice, changes nothing and yields the same notifications', async () => {
    const before = await snapshot();
    const again = await apply(history);
    expect(again.map((n) => n.eventId)).toEqual((await apply(history)).map((n) => n.eventId));
    expect(await snapshot()).toEqual(before);
  });

  it('a deleted Gofer loses its chat and keeps a tombstone', async () => {
    await apply([ev('GoferDeleted', { deletedAt: at(9) })]);
    const s = await snapshot();
    expect(s.messages).toEqual([]);
    expect(new Date((s.gofers[0] as { deleted_at: string }).deleted_at).toISOString()).toBe(at(9));
  });
});
