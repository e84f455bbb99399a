// kafkajs's RequestQueue idle loop (src/requestQueueFix.ts) against the real broker.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokersFromEnv, createKafka, silentLogger } from '../src/index.ts';
import type { KafkaHandle } from '../src/index.ts';
import { ensureBroker, uniqueSuffix } from './helpers.ts';

const require = createRequire(import.meta.url);
const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as {
  prototype: { checkPendingRequests: (this: unknown) => void };
};

let kafka: KafkaHandle;
const topic = `it-rq-${uniqueSuffix()}`;

beforeAll(() => {
  ensureBroker();
  kafka = createKafka({ brokers: brokersFromEnv(), clientId: 'rq-int-test', logger: silentLogger });
}, 600_000);

afterAll(async () => {
  if (kafka) {
    await kafka.deleteTopics([topic]);
    await kafka.close();
  }
});

describe("kafkajs's request queue with the idle-loop fix", () => {
  it('checks for pending requests a handful of times a second on idle connections, not once a millisecond', async () => {
    await kafka.ensureTopics([{ topic }]);
    const producer = await kafka.producer();
    await producer.send({ topic, messages: [{ key: 'k', value: 'before' }] });
    const proto = RequestQueue.prototype;
    const check = proto.checkPendingRequests;
    let checks = 0;
    proto.checkPendingRequests = function (this: unknown) {
      checks += 1;
      check.call(this);
    };
    try {
      await new Promise((r) => setTimeout(r, 1000));
      // Without the fix every connection (producer, admin) checks about once a millisecond.
      expect(checks).toBeLessThan(20);
      // Requests still go out and are answered after the quiet second.
      const [sent] = await producer.send({ topic, messages: [{ key: 'k', value: 'after' }] });
      expect(sent?.errorCode).toBe(0);
      const admin = await kafka.admin();
      expect((await admin.fetchTopicOffsets(topic))[0]?.high).toBe('2');
    } finally {
      proto.checkPendingRequests = check;
    }
  });
});
