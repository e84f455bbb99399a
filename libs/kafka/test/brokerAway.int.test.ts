// A process that starts while its broker does not answer (killed, restarting, a route not there yet)
// waits for it: the clients it connects at start-up are made once the broker answers, however long
// that takes, instead of failing after kafkajs's own few retries (about ten seconds) and taking the
// process down with them. Seen in the nemesis: a projector restarted while the broker was away
// exited during start-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokersFromEnv, createKafka, runConsumer } from '../src/index.ts';
import type { ConsumedMessage, KafkaHandle, LogSink, RunningConsumer, Sender } from '../src/index.ts';
import { Door } from '../../../test/faults/linkProxy.ts';
import { ensureBroker, uniqueSuffix, waitUntil } from './helpers.ts';

/** Longer than kafkajs's own retries of a connect (five, about ten seconds in all). */
const AWAY_MS = 20_000;

const noop = (): void => undefined;
const waits: string[] = [];
const logger: LogSink = { debug: noop, info: noop, warn: (_obj, msg) => waits.push(msg), error: noop };

const [broker] = brokersFromEnv();
let direct: KafkaHandle;
let routed: KafkaHandle | undefined;
let door: Door;
let consumer: RunningConsumer | undefined;
const topic = `it-away-${uniqueSuffix()}`;

beforeAll(async () => {
  ensureBroker();
  direct = createKafka({ brokers: [broker!], clientId: 'away-int-test', logger });
  await direct.ensureTopics([{ topic, numPartitions: 1 }]);
  door = await Door.shut(broker!);
}, 600_000);

afterAll(async () => {
  await consumer?.stop().catch(noop);
  await routed?.close();
  await door?.close();
  await direct.deleteTopics([topic]);
  await direct.close();
}, 60_000);

describe('clients connected while the broker does not answer', () => {
  it('wait for it, then send and consume as usual', async () => {
    // Every broker address, the seed and what the metadata advertises, goes through the door.
    routed = createKafka({
      brokers: [broker!],
      brokerRoutes: { [broker!]: `127.0.0.1:${door.port}` },
      clientId: 'away-int-test-routed',
      logger,
    });
    const received: ConsumedMessage[] = [];
    const outcomes: string[] = [];
    const sending = routed.sender();
    const consuming = runConsumer({
      kafka: routed,
      groupId: `it-away-${uniqueSuffix()}`,
      topics: [topic],
      fromBeginning: true,
      eachBatch: async (b) => {
        received.push(...b.messages);
        await b.commit(b.messages.at(-1)!.offset);
      },
    });
    sending.then(
      () => outcomes.push('sender ready'),
      (err: unknown) => outcomes.push(`sender failed: ${String(err)}`),
    );
    consuming.then(
      (c) => {
        consumer = c;
        outcomes.push('consumer ready');
      },
      (err: unknown) => outcomes.push(`consumer failed: ${String(err)}`),
    );

    await new Promise((r) => setTimeout(r, AWAY_MS));
    expect(outcomes, 'while the broker is away').toEqual([]);
    expect(waits.filter((w) => w.includes('does not answer')).length).toBeGreaterThan(0);

    await door.open();
    const sender: Sender = await sending;
    await consuming;
    expect(outcomes.sort()).toEqual(['consumer ready', 'sender ready']);
    await sender.send({ topic, messages: [{ key: 'k', value: 'after the wait' }] });
    await waitUntil(() => received.length > 0, 30_000, 'the record sent after the wait');
    expect(received.map((m) => m.value?.toString())).toEqual(['after the wait']);
  }, 120_000);

  it('ends the wait with the error once the handle is closed', async () => {
    const closing = createKafka({
      brokers: [broker!],
      brokerRoutes: { [broker!]: `127.0.0.1:${(await Door.shut(broker!)).port}` },
      clientId: 'away-int-test-closing',
      logger,
    });
    let settled = false;
    const connecting = closing.producer().finally(() => (settled = true));
    connecting.catch(noop);
    // Past kafkajs's own retries: only the wait is left holding the call.
    await new Promise((r) => setTimeout(r, 12_000));
    expect(settled, 'settled before the handle was closed').toBe(false);
    await closing.close();
    await expect(connecting).rejects.toThrow(/ECONNREFUSED/);
  }, 60_000);
});
