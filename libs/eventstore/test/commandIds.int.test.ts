import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, openDatabase, sql, type MikroORM } from '@oan/db';
import type { Decider, Timed } from '@oan/domain';
import {
  commandHandler,
  commandIdsMigration,
  EventStore,
  handleMultiStreamCommand,
  type StoredEvent,
} from '../src/index.ts';

const url = `postgres://postgres@127.0.0.1:5432/oan_t_${randomBytes(4).toString('hex')}`;
const store = new EventStore('cid_test');
let orm: MikroORM;

beforeAll(async () => {
  orm = await openDatabase({
    url,
    schema: 'cid_test',
    migrations: [store.migration(), commandIdsMigration(store)],
  });
});
afterAll(async () => {
  await orm.close(true);
  await dropDatabase(url);
});

type Event = { type: 'Counted'; data: { owner: string; at: string } };
type Command = { type: 'Count'; data: { owner: string } };
/** Counts without a limit: every command that decides appends one more event. */
const counter: Decider<number, Event, Timed<Command>> = {
  initialState: () => 0,
  evolve: (n) => n + 1,
  decide: (c) => [{ type: 'Counted', data: { owner: c.data.owner, at: c.metadata.now } }],
};

const count: ReturnType<typeof counting> = (...args) => counting()(...args);
const counting = () =>
  commandHandler({
    orm,
    store,
    decider: counter,
    now: () => new Date(),
    partitionKey: (_state, events) => events[0]!.data.owner,
  });
const streamLength = async (streamId: string) => (await store.readStream(orm.em.fork(), streamId)).length;
const unique = (what: string) => `${what}-${randomBytes(4).toString('hex')}`;

describe('a command with a command id', () => {
  it('appends once when sent again, and answers the events of the first run', async () => {
    const stream = unique('c');
    const first = await count(stream, { type: 'Count', data: { owner: 'a' } }, { commandId: unique('cmd') });
    const commandId = unique('cmd');
    const once = await count(stream, { type: 'Count', data: { owner: 'a' } }, { commandId });
    const again = await count(stream, { type: 'Count', data: { owner: 'a' } }, { commandId });
    expect(first.repeated).toBeUndefined();
    expect(once.repeated).toBeUndefined();
    expect(again.repeated).toBe(true);
    expect(again.appended).toEqual(once.appended);
    expect(again.state).toBe(2);
    expect(await streamLength(stream)).toBe(2);
  });

  it('appends once when two commands with one id race', async () => {
    const stream = unique('c');
    const commandId = unique('cmd');
    const results = await Promise.all(
      Array.from({ length: 6 }, () => count(stream, { type: 'Count', data: { owner: 'a' } }, { commandId })),
    );
    expect(await streamLength(stream)).toBe(1);
    expect(results.filter((r) => !r.repeated)).toHaveLength(1);
    const ids = new Set(results.map((r) => r.appended.map((e: StoredEvent) => e.eventId).join()));
    expect(ids.size).toBe(1);
  });

  it('records nothing for a command its decider refused, so the id can run again', async () => {
    const stream = unique('c');
    const commandId = unique('cmd');
    const refusing = commandHandler({
      orm,
      store,
      decider: {
        ...counter,
        decide: () => {
          throw new Error('refused');
        },
      },
      now: () => new Date(),
      partitionKey: () => 'a',
    });
    await expect(refusing(stream, { type: 'Count', data: { owner: 'a' } }, { commandId })).rejects.toThrow(
      'refused',
    );
    const [row] = await sql<{ n: string }>(
      orm.em.fork(),
      'select count(*) as n from cid_test.commands where command_id = ?',
      [commandId],
    );
    expect(Number(row!.n)).toBe(0);
    const ran = await count(stream, { type: 'Count', data: { owner: 'a' } }, { commandId });
    expect(ran.repeated).toBeUndefined();
    expect(await streamLength(stream)).toBe(1);
  });
});

describe('a multi-stream command with a command id', () => {
  it('appends once across a race and answers the recorded result', async () => {
    const [a, b] = [unique('m'), unique('m')];
    const commandId = unique('cmd');
    const run = () =>
      handleMultiStreamCommand(
        orm,
        store,
        async (load) => {
          const n = await load(a, counter);
          await load(b, counter);
          const event = {
            type: 'Counted',
            data: { owner: 'a', at: 'now' },
            partitionKey: 'a',
            occurredAt: new Date().toISOString(),
          };
          return {
            appends: [
              { streamId: a, events: [event] },
              { streamId: b, events: [event] },
            ],
            result: { before: n, token: randomBytes(4).toString('hex') },
          };
        },
        { commandId },
      );
    const results = await Promise.all([run(), run(), run()]);
    expect(await streamLength(a)).toBe(1);
    expect(await streamLength(b)).toBe(1);
    expect(results.map((r) => r.result)).toEqual([results[0].result, results[0].result, results[0].result]);
    expect(results.filter((r) => r.repeated)).toHaveLength(2);
    expect(results.every((r) => r.appended.length === 2)).toBe(true);
  });
});
