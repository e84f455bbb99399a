import { describe, expect, it } from 'vitest';
import { brokerAway, retrying } from '../src/retrying.ts';

describe('retrying', () => {
  it('tries again after doubling pauses until the call resolves, telling of each error', async () => {
    const told: number[] = [];
    let calls = 0;
    const started = Date.now();
    const value = await retrying(
      async () => {
        if (++calls < 4) throw new Error(`no ${calls}`);
        return 'done';
      },
      { withinMs: 10_000, maxPauseMs: 150, onRetry: (_err, attempt) => told.push(attempt) },
    );
    expect(value).toBe('done');
    expect(calls).toBe(4);
    expect(told).toEqual([0, 1, 2]);
    // 100 + 150 (capped) + 150 ms of pauses.
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('throws at once an error it is not to retry', async () => {
    let calls = 0;
    const fatal = Object.assign(new Error('fatal'), { retriable: false });
    await expect(
      retrying(
        async () => {
          calls++;
          throw fatal;
        },
        {
          withinMs: 10_000,
          maxPauseMs: 100,
          retry: (err) => (err as { retriable?: boolean }).retriable === true,
        },
      ),
    ).rejects.toBe(fatal);
    expect(calls).toBe(1);
  });

  it('tries a TypeError again like any other error (kafkajs throws some while a broker comes back)', async () => {
    let calls = 0;
    const told: unknown[] = [];
    const value = await retrying(
      async () => {
        if (++calls < 3) throw new TypeError(`no ${calls}`);
        return 'done';
      },
      { withinMs: 10_000, maxPauseMs: 100, onRetry: (err) => told.push(err) },
    );
    expect(value).toBe('done');
    expect(told.map((e) => [(e as Error).name, (e as Error).message])).toEqual([
      ['TypeError', 'no 1'],
      ['TypeError', 'no 2'],
    ]);
    // And one the policy does not retry is thrown as it was thrown.
    const fatal = new TypeError('fatal');
    await expect(
      retrying(
        async () => {
          throw fatal;
        },
        { withinMs: 10_000, maxPauseMs: 100, retry: () => false },
      ),
    ).rejects.toBe(fatal);
  });

  it('throws the last error once its time is up', async () => {
    let calls = 0;
    const thrown = await retrying(
      async () => {
        throw new Error(`attempt ${++calls}`);
      },
      { withinMs: 250, maxPauseMs: 100 },
    ).catch((err: unknown) => err as Error);
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(thrown.message).toBe(`attempt ${calls}`);
  });
});

describe('brokerAway', () => {
  const refused = Object.assign(new Error('Connection error: connect ECONNREFUSED'), {
    name: 'KafkaJSConnectionError',
    retriable: true,
  });
  it('is true of a retriable error, and of one wrapped once kafkajs spent its retries', () => {
    expect(brokerAway(refused)).toBe(true);
    const spent = Object.assign(new Error(refused.message), {
      name: 'KafkaJSNumberOfRetriesExceeded',
      retriable: false,
      cause: refused,
    });
    expect(brokerAway(spent)).toBe(true);
    expect(brokerAway(Object.assign(new Error('outer'), { cause: spent }))).toBe(true);
  });
  it('is false of an error no cause of which is retriable', () => {
    const denied = Object.assign(new Error('Topic authorization failed'), { retriable: false });
    expect(brokerAway(denied)).toBe(false);
    expect(brokerAway(Object.assign(new Error('wrapped'), { retriable: false, cause: denied }))).toBe(false);
    expect(brokerAway(new TypeError('x is undefined'))).toBe(false);
    expect(brokerAway(undefined)).toBe(false);
  });
});
