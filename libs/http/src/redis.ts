import type { Redis } from 'ioredis';

/**
 * SUBSCRIBE once the connection is ready. ioredis 5 writes a SUBSCRIBE issued while it is still
 * handshaking (status `connect`); when the reply comes back before its ready check's INFO is sent,
 * INFO is refused ("Connection in subscriber mode"), the ready check fails, the connection is
 * dropped and what was published meanwhile is lost (redis/ioredis#2037, fixed only in ioredis 6).
 * After a ready connection drops, ioredis subscribes again by itself (`autoResubscribe`).
 */
export async function subscribeWhenReady(sub: Redis, ...channels: string[]): Promise<void> {
  if (sub.status === 'wait') sub.connect().catch(() => undefined);
  while (sub.status !== 'ready') {
    if (sub.status === 'end') throw new Error('Redis connection closed before it was ready');
    await new Promise<void>((resolve) => {
      const done = () => {
        sub.off('ready', done);
        sub.off('end', done);
        resolve();
      };
      sub.on('ready', done);
      sub.on('end', done);
    });
  }
  await sub.subscribe(...channels);
}
