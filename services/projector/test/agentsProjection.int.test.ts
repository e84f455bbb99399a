import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import { SCHEMAS_DIR, SchemaRegistry } from '@oan/kafka';
import { readModelMigrations as migrations, projections, type DomainEvent } from '@oan/readmodels';
import { projectDomainEvents } from '../src/stages/domain.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
let orm: MikroORM;
beforeAll(async () => {
  orm = await openDatabase({ url, schema: 'projector', migrations });
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

const registry = new SchemaRegistry(SCHEMAS_DIR);
const address = `0x${randomBytes(32).toString('hex')}`;
let position = 0n;

/** An event as the projector receives it off `agents.events` (through its Avro schema, keyed by address). */
function ev(type: string, data: Record<string, unknown>): DomainEvent {
  const { value } = registry.encode(type, data);
  return {
    eventId: randomUUID(),
    type,
    streamId: `agent-${address}`,
    accountId: address,
    occurredAt: new Date().toISOString(),
    position: ++position,
    data: registry.decode(type, registry.latestVersion(type), value),
  };
}
const announced = (conn: string, ts: number, summary: string) =>
  ev('AgentAnnounced', {
    address,
    summary,
    endpoints: ['https://agent.example'],
    profile: JSON.stringify({ alias: 'echo' }),
    timestamp: ts,
    connectionId: conn,
    announcedAt: new Date(ts * 1000).toISOString(),
  });
const departed = (conn: string, ts: number) =>
  ev('AgentDeparted', {
    address,
    connectionId: conn,
    reason: 'closed',
    departedAt: new Date(ts * 1000).toISOString(),
  });

const apply = (...events: DomainEvent[]) =>
  orm.em.fork().transactional((em) => projectDomainEvents(em, events, projections, {}));
const row = async () =>
  (
    await sql<{ summary: string; connection_id: string; online: boolean; endpoints: string[] }>(
      orm.em.fork(),
      'select summary, connection_id, online, endpoints from read.agents where address = ?',
      [address],
    )
  )[0];

describe('read.agents, the relay directory', () => {
  const first = announced('a1.1', 1_700_000_000, 'first');
  const second = announced('a2.7', 1_700_000_100, 'second');

  it('keeps the latest announcement, and applying any event twice changes nothing', async () => {
    await apply(first, second, first);
    expect(await row()).toMatchObject({ summary: 'second', connection_id: 'a2.7', online: true });
    await apply(second);
    expect(await row()).toMatchObject({ summary: 'second', connection_id: 'a2.7', online: true });
  });

  it("ignores the departure of a replaced socket and applies its current socket's departure once", async () => {
    await apply(departed('a1.1', 1_700_000_200));
    expect((await row())?.online).toBe(true);
    const gone = departed('a2.7', 1_700_000_300);
    await apply(gone, gone);
    expect(await row()).toMatchObject({ connection_id: 'a2.7', online: false });
    await apply(announced('a1.9', 1_700_000_400, 'back'));
    expect(await row()).toMatchObject({
      summary: 'back',
      online: true,
      endpoints: ['https://agent.example'],
    });
  });
});
