import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, type MikroORM } from '@oan/db';
import type { Decider, Timed } from '@oan/domain';
import { commandHandler, EventStore, type StoredEvent } from '../src/index.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
const store = new EventStore('ch_test');
let orm: MikroORM;

beforeAll(async () => {
  orm = await openDatabase({ url, schema: 'ch_test', migrations: [store.migration()] });
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

type Event = { type: 'Counted'; data: { owner: string; at: string } };
type Command = { type: 'Count'; data: { owner: string; upTo: number } };
/** Counts up to a limit: a command past it decides nothing. */
const counter: Decider<number, Event, Timed<Command>> = {
  initialState: () => 0,
  evolve: (n) => n + 1,
  decide: (c, n) =>
    n >= c.data.upTo ? [] : [{ type: 'Counted', data: { owner: c.data.owner, at: c.metadata.now } }],
};
const NOW = new Date('2026-12-01T10:00:00.000Z');

function handler(remembered: { last: StoredEvent; callers: readonly string[] }[]) {
  return commandHandler({
    orm,
    store,
    decider: counter,
    now: () => NOW,
    partitionKey: (_state, events) => events[0]!.data.owner,
    remember: async (last, callers) => {
      remembered.push({ last, callers });
    },
  });
}

describe('a stream through commandHandler', () => {
  it('appends the decided events stamped with the time, under their partition key, and remembers the last', async () => {
    const remembered: { last: StoredEvent; callers: readonly string[] }[] = [];
    const run = handler(remembered);
    const { state, appended } = await run(
      'c-1',
      { type: 'Count', data: { owner: 'acc-1', upTo: 2 } },
      {
        callers: ['acc-2'],
      },
    );
    expect(state).toBe(1);
    expect(appended).toMatchObject([
      {
        type: 'Counted',
        partitionKey: 'acc-1',
        occurredAt: NOW.toISOString(),
        data: { at: NOW.toISOString() },
      },
    ]);
    expect(remembered).toEqual([{ last: appended[0], callers: ['acc-2'] }]);
  });

  it('appends and remembers nothing when the decider decides nothing', async () => {
    const remembered: { last: StoredEvent; callers: readonly string[] }[] = [];
    const run = handler(remembered);
    const command = { type: 'Count', data: { owner: 'acc-1', upTo: 1 } } as const;
    await run('c-2', command);
    const { state, appended } = await run('c-2', command);
    expect([state, appended]).toEqual([1, []]);
    expect(remembered).toHaveLength(1);
  });

  it('builds a command in the transaction from the state, and runs the call’s inline there', async () => {
    const run = handler([]);
    const seen: number[] = [];
    await run('c-3', (state) => ({ type: 'Count', data: { owner: `acc-${state}`, upTo: 1 } }), {
      inline: async (_em, appended, state) => void seen.push(appended.length, state),
    });
    expect((await store.readStream(orm.em.fork(), 'c-3')).map((e) => e.partitionKey)).toEqual(['acc-0']);
    expect(seen).toEqual([1, 1]);
  });
});
