import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { subscribeWhenReady } from '../src/redis.ts';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const open: Redis[] = [];
afterEach(() => {
  for (const r of open.splice(0)) r.disconnect();
});

/** A connection caught mid-handshake (TCP up, ready check not sent yet): where ioredis 5 races. */
async function handshaking(): Promise<{ sub: Redis; errors: Error[] }> {
  const sub = new Redis(url);
  open.push(sub);
  const errors: Error[] = [];
  sub.on('error', (err: Error) => errors.push(err));
  await new Promise<void>((resolve) => sub.once('connect', () => resolve()));
  return { sub, errors };
}

describe('subscribing a connection that is still handshaking', () => {
  it('keeps the connection and hears what is published after it resolves', async () => {
    const channel = `test-subscribe-${randomUUID()}`;
    const pub = new Redis(url);
    open.push(pub);
    for (let i = 0; i < 20; i++) {
      const { sub, errors } = await handshaking();
      const heard: string[] = [];
      sub.on('message', (_c: string, m: string) => heard.push(m));
      await subscribeWhenReady(sub, channel);
      expect(await pub.publish(channel, `m${i}`)).toBe(1);
      await expect.poll(() => heard).toEqual([`m${i}`]);
      expect(errors).toEqual([]);
      expect(sub.status).toBe('ready');
      sub.disconnect();
    }
  });

  it('sends SUBSCRIBE only once the connection is ready', async () => {
    const { sub, errors } = await handshaking();
    expect(sub.status).toBe('connect');
    // What ioredis 5 gets wrong at this moment (redis/ioredis#2037; 300 of 300 plain SUBSCRIBEs on
    // `connect` dropped the connection on a quiet machine): the helper must not send it yet.
    const statusWhenSent: string[] = [];
    const subscribe = sub.subscribe.bind(sub);
    sub.subscribe = ((...args: Parameters<typeof sub.subscribe>) => {
      statusWhenSent.push(sub.status);
      return subscribe(...args);
    }) as typeof sub.subscribe;
    await subscribeWhenReady(sub, `test-subscribe-${randomUUID()}`);
    expect(statusWhenSent).toEqual(['ready']);
    expect(errors).toEqual([]);
  });

  it('refuses a connection that was closed', async () => {
    const sub = new Redis(url, { lazyConnect: true });
    sub.disconnect();
    await expect(subscribeWhenReady(sub, 'x')).rejects.toThrow(/closed/);
  });
});
