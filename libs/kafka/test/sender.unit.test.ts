import { KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { needsNewProducer } from '../src/sender.ts';

/** A broker's error answer as kafkajs raises it (error codes of the Kafka protocol). */
const answer = (type: string, code: number) =>
  // The runtime takes the protocol's error-code entry; the published typings know only a message.
  new KafkaJSProtocolError({ type, code, retriable: false, message: type } as unknown as Error);

describe('needsNewProducer (a Sender renews its producer id after these)', () => {
  it('is true for the answers that leave an idempotent producer id unusable, bare or wrapped', () => {
    for (const [type, code] of [
      ['OUT_OF_ORDER_SEQUENCE_NUMBER', 45],
      ['UNKNOWN_PRODUCER_ID', 59],
      ['INVALID_PRODUCER_EPOCH', 47],
      ['INVALID_PRODUCER_ID_MAPPING', 49],
    ] as const) {
      expect(needsNewProducer(answer(type, code)), type).toBe(true);
      expect(
        needsNewProducer(
          new KafkaJSNumberOfRetriesExceeded(answer(type, code), { retryCount: 5, retryTime: 1000 }),
        ),
        type,
      ).toBe(true);
    }
  });

  it('is false for everything a retry on the same producer can get past', () => {
    expect(needsNewProducer(answer('NOT_LEADER_FOR_PARTITION', 6))).toBe(false);
    expect(needsNewProducer(answer('REQUEST_TIMED_OUT', 7))).toBe(false);
    expect(needsNewProducer(new Error('connect ECONNREFUSED'))).toBe(false);
    expect(needsNewProducer(undefined)).toBe(false);
  });
});
