// Several reactors in one consumer group (ADR 0049), against the real broker.
import { fileURLToPath } from 'node:url';
import { register } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SchemaRegistry,
  brokersFromEnv,
  createKafka,
  startReactorGroup,
  toKafkaMessage,
} from '../src/index.ts';
import type { KafkaHandle, LogRecord, LogSink, ReactorMember, RunningReactor } from '../src/index.ts';
import { ensureBroker, uniqueSuffix, waitUntil } from './helpers.ts';

const registry = new SchemaRegistry(fileURLToPath(new URL('./fixtures/schemas/good', import.meta.url)));
const noop = (): void => undefined;
const started: object[] = [];
const logger: LogSink = {
  debug: noop,
  info: (obj, msg) => {
    if (msg === 'reactor started') started.push(obj);
  },
  warn: noop,
  error: noop,
};
const topics: string[] = [];
const groups: string[] = [];
const running: RunningReactor[] = [];
let kafka: KafkaHandle;

async function newTopic(numPartitions = 1): Promise<string> {
  const topic = `it-rg-${uniqueSuffix()}`;
  topics.push(topic);
  await kafka.ensureTopics([{ topic, numPartitions }]);
  return topic;
}
const newGroup = (what: string): string => {
  const g = `it-rg-${what}-${uniqueSuffix()}`;
  groups.push(g);
  return g;
};

const widget = (key: string, i: number) =>
  toKafkaMessage(registry, {
    key,
    type: 'Widget',
    data: { id: `w${i}`, count: i, label: null, color: 'green' },
    headers: {},
  });
const gadget = (key: string, i: number) =>
  toKafkaMessage(registry, {
    key,
    type: 'Gadget',
    data: { id: `g${i}`, payload: '{}', createdAt: i },
    headers: {},
  });

async function send(topic: string, messages: ReturnType<typeof widget>[], partition?: number) {
  const producer = await kafka.producer();
  await producer.send({
    topic,
    messages: messages.map((m) => (partition === undefined ? m : { ...m, partition })),
  });
  await producer.disconnect();
}

/** The group's committed offset (the next to read) per partition of the topic; -1 where none. */
async function committed(groupId: string, topic: string): Promise<number[]> {
  const admin = await kafka.admin();
  const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return (t?.partitions ?? []).sort((a, b) => a.partition - b.partition).map((p) => Number(p.offset));
}

/** A member recording what it handled, as `<id>@<offset>`. */
function recorder(
  name: string,
  topic: string,
  types: string[],
  opts: Partial<ReactorMember> & { before?: (r: LogRecord) => Promise<void> } = {},
) {
  const seen: string[] = [];
  const member: ReactorMember = {
    name,
    topic,
    types: new Set(types),
    ...opts,
    handle: async (r) => {
      await opts.before?.(r);
      seen.push(`${(r.data as { id: string }).id}@${r.offset}`);
    },
  };
  return { member, seen, ids: () => seen.map((s) => s.split('@')[0]!) };
}

async function start(groupId: string, members: ReactorMember[]): Promise<RunningReactor> {
  const r = await startReactorGroup({ kafka, registry, logger, groupId, members });
  running.push(r);
  return r;
}

beforeAll(() => {
  ensureBroker();
  kafka = createKafka({ brokers: brokersFromEnv(), clientId: 'reactor-group-int-test', logger });
}, 600_000);

afterAll(async () => {
  for (const r of running) await r.stop().catch(noop);
  if (kafka) {
    const admin = await kafka.admin();
    await admin.deleteGroups(groups).catch(noop);
    await kafka.deleteTopics(topics);
    await kafka.close();
  }
}, 60_000);

describe('a reactor group', () => {
  it('hands each record of its topics to every member that acts on its type, in order per key, and commits all', async () => {
    const a = await newTopic(2);
    const b = await newTopic(1);
    await send(a, [
      ...Array.from({ length: 30 }, (_, i) => widget(`k${i % 3}`, i)),
      widget('spread', 1000),
      ...Array.from({ length: 10 }, (_, i) => gadget(`k${i % 3}`, i)),
    ]);
    await send(
      b,
      Array.from({ length: 5 }, (_, i) => widget('b', 100 + i)),
    );
    const widgets = recorder('widgets', a, ['Widget'], {
      concurrency: 4,
      keyOf: (r) => r.key ?? '',
    });
    const both = recorder('both', a, ['Widget', 'Gadget']);
    const onB = recorder('on-b', b, ['Widget']);
    const groupId = newGroup('shared');
    const group = await start(groupId, [widgets.member, both.member, onB.member]);
    await waitUntil(
      () => widgets.seen.length >= 31 && both.seen.length >= 41 && onB.seen.length >= 5,
      30_000,
      'every member handled its records',
    );
    await group.stop();

    expect(widgets.ids().sort()).toEqual([...Array.from({ length: 30 }, (_, i) => `w${i}`), 'w1000'].sort());
    expect(both.ids().sort()).toEqual(
      [
        ...Array.from({ length: 30 }, (_, i) => `w${i}`),
        'w1000',
        ...Array.from({ length: 10 }, (_, i) => `g${i}`),
      ].sort(),
    );
    expect(onB.ids()).toEqual(['w100', 'w101', 'w102', 'w103', 'w104']);
    // One key's records in the order they were sent, whatever ran beside them.
    for (let k = 0; k < 3; k++) {
      const ofKey = widgets.ids().filter((id) => id !== 'w1000' && Number(id.slice(1)) % 3 === k);
      expect(ofKey).toEqual([...ofKey].sort((x, y) => Number(x.slice(1)) - Number(y.slice(1))));
    }
    const ends = async (topic: string) => {
      const admin = await kafka.admin();
      return (await admin.fetchTopicOffsets(topic))
        .sort((x, y) => x.partition - y.partition)
        .map((p) => (Number(p.high) === 0 ? -1 : Number(p.high))); // nothing to commit on an empty one
    };
    expect(await committed(groupId, a)).toEqual(await ends(a));
    expect(await committed(groupId, b)).toEqual(await ends(b));
  });

  it('commits no further than its slowest member, and a member that fails redelivers the batch to all', async () => {
    const t = await newTopic(1);
    await send(
      t,
      Array.from({ length: 10 }, (_, i) => widget('k', i)),
    );
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = recorder('slow', t, ['Widget'], {
      before: async (r) => {
        if (r.offset === '4') await gate;
      },
    });
    let failures = 0;
    const flaky = recorder('flaky', t, ['Widget'], {
      before: async (r) => {
        if (r.offset === '7' && failures++ === 0) throw new Error('once');
      },
    });
    const groupId = newGroup('slow');
    const group = await start(groupId, [slow.member, flaky.member]);
    await waitUntil(() => slow.seen.length === 4 && flaky.seen.length >= 7, 30_000, 'both up to the gate');
    // The flaky member is past offset 4, the slow one is not: the group's offset stays at 4.
    await new Promise((r) => setTimeout(r, 1000));
    expect(await committed(groupId, t)).toEqual([4]);

    release();
    await waitUntil(() => slow.ids().includes('w9') && flaky.ids().includes('w9'), 30_000, 'the end');
    await group.stop();
    expect(failures).toBeGreaterThanOrEqual(1);
    // Every record reached each member; what came again came from the failed batch onwards.
    const all = Array.from({ length: 10 }, (_, i) => `w${i}`);
    expect([...new Set(slow.ids())].sort()).toEqual(all.sort());
    expect([...new Set(flaky.ids())].sort()).toEqual(all.sort());
    const firstOf = (ids: string[]) => ids.filter((id, i) => ids.indexOf(id) === i);
    expect(firstOf(slow.ids())).toEqual(Array.from({ length: 10 }, (_, i) => `w${i}`));
    expect(firstOf(flaky.ids())).toEqual(Array.from({ length: 10 }, (_, i) => `w${i}`));
    expect(slow.seen.filter((s) => s === 'w0@0')).toHaveLength(1);
    expect(await committed(groupId, t)).toEqual([10]);
  });

  it("starts where its members' own groups stood: the earliest of them per partition, the beginning where one had none", async () => {
    const t = await newTopic(2);
    for (const p of [0, 1])
      await send(
        t,
        Array.from({ length: 10 }, (_, i) => widget(`p${p}`, p * 100 + i)),
        p,
      );
    const own1 = newGroup('own1');
    const own2 = newGroup('own2');
    const admin = await kafka.admin();
    await admin.setOffsets({
      groupId: own1,
      topic: t,
      partitions: [
        { partition: 0, offset: '8' },
        { partition: 1, offset: '3' },
      ],
    });
    await admin.setOffsets({ groupId: own2, topic: t, partitions: [{ partition: 0, offset: '5' }] });

    const m1 = recorder(own1, t, ['Widget']);
    const m2 = recorder(own2, t, ['Widget']);
    const groupId = newGroup('carried');
    const group = await start(groupId, [m1.member, m2.member]);
    await waitUntil(() => m1.seen.length >= 15 && m2.seen.length >= 15, 30_000, 'the carried records');
    await new Promise((r) => setTimeout(r, 500));
    await group.stop();
    // Partition 0 from offset 5 (own2's, the earlier), partition 1 from the beginning (own2 had none).
    const expected = [
      ...Array.from({ length: 5 }, (_, i) => `w${5 + i}`),
      ...Array.from({ length: 10 }, (_, i) => `w${100 + i}`),
    ].sort();
    expect(m1.ids().sort()).toEqual(expected);
    expect(m2.ids().sort()).toEqual(expected);
    expect(started.at(-1)).toMatchObject({ groupId, carried: 1 });

    // Once the group has offsets of its own, a restart keeps them: nothing is handled again.
    await send(t, [widget('p0', 50)], 0);
    const m3 = recorder(own1, t, ['Widget']);
    const again = await start(groupId, [m3.member, recorder(own2, t, ['Widget']).member]);
    await waitUntil(() => m3.seen.length >= 1, 30_000, 'the new record');
    await new Promise((r) => setTimeout(r, 1000));
    await again.stop();
    expect(m3.ids()).toEqual(['w50']);
  });

  it('with gatherMs, fetches a trickle of records a few times, not once per record', async () => {
    const t = await newTopic(1);
    const fetches = async () =>
      (await register.getSingleMetric('oan_kafka_requests_total')!.get()).values
        .filter((v) => v.labels.role === 'consumer' && v.labels.api === 'Fetch')
        .reduce((a, v) => a + v.value, 0);
    const m = recorder('trickled', t, ['Widget']);
    const group = await startReactorGroup({
      kafka,
      registry,
      logger,
      groupId: newGroup('gather'),
      members: [m.member],
      gatherMs: 200,
    });
    running.push(group);
    await group.consumer.waitForAssignment();
    const producer = await kafka.producer();
    const before = await fetches();
    const started = Date.now();
    for (let i = 0; i < 40; i++) {
      await producer.send({ topic: t, messages: [widget('k', i)] });
      await new Promise((r) => setTimeout(r, 25));
    }
    await waitUntil(() => m.seen.length === 40, 30_000, 'the trickle');
    const used = (await fetches()) - before;
    const elapsed = Date.now() - started;
    await producer.disconnect();
    await group.stop();
    // One record every 25 ms or so: fetching at once would take about one fetch per record.
    expect(m.ids()).toEqual(Array.from({ length: 40 }, (_, i) => `w${i}`));
    expect(used).toBeLessThanOrEqual(Math.ceil(elapsed / 200) + 3);
    expect(used).toBeLessThan(20);
  });

  it('refuses several members without a group of their own', async () => {
    const t = await newTopic(1);
    await expect(
      startReactorGroup({
        kafka,
        registry,
        logger,
        members: [recorder('x', t, ['Widget']).member, recorder('y', t, ['Widget']).member],
      }),
    ).rejects.toThrow('needs its own groupId');
  });
});
