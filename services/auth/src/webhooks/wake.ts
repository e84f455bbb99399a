import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';

/**
 * Wakes the delivery loop when the projector announces an envelope on the push stream (the entry
 * the gateways tail, docs/architecture.md). Only an accelerator: a missed entry waits for the poll.
 */
export class PushWake {
  private stopped = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly onEnvelope: () => void,
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    const last = (await this.redis.xrevrange(this.key, '+', '-', 'COUNT', 1)) as [string, string[]][];
    let lastId = last[0]?.[0] ?? '0-0';
    this.loop = (async () => {
      while (!this.stopped) {
        try {
          const reply = await this.redis.xread('COUNT', 1000, 'BLOCK', 5000, 'STREAMS', this.key, lastId);
          const entries = reply?.[0]?.[1] ?? [];
          if (entries.length === 0) continue;
          lastId = entries[entries.length - 1]![0];
          if (entries.some(([, fields]) => fields[0] === 't' && fields[1] === 'env')) this.onEnvelope();
        } catch (err) {
          if (this.stopped) break;
          this.log.warn({ err }, 'push stream read failed; the poll covers it');
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.redis.disconnect(); // a dedicated connection: quit would wait for the pending BLOCK
    await this.loop;
  }
}
