import type { Redis } from 'ioredis';

/** Where a push tail reports a read that failed or an entry it cannot parse (a pino logger is one). */
export interface PushTailLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** An entry of the `push` stream (docs/architecture.md, Redis). */
export type PushEntry = { t: 'env'; a: string; s: bigint; e: string } | { t: 'revoke'; a: string; k: string };

export function parsePushEntry(fields: readonly string[]): PushEntry | null {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i] as string] = fields[i + 1] as string;
  if (!f.a) return null;
  if (f.t === 'env' && f.e && f.s && /^\d+$/.test(f.s)) return { t: 'env', a: f.a, s: BigInt(f.s), e: f.e };
  if (f.t === 'revoke' && f.k) return { t: 'revoke', a: f.a, k: f.k };
  return null;
}

/**
 * Tails the push stream with XREAD BLOCK on a dedicated connection (a blocked connection can serve
 * nothing else): the gateways, for their sockets and long-polls, and the webhook delivery, as a
 * wake-up. Starts after the stream's last entry at start-up and remembers the last id read, so a Redis
 * reconnect resumes exactly where it stopped; a publish lost before start-up or during an outage longer
 * than the stream's retention is covered by the delivery sweep (which fills gaps from the event table).
 */
export class PushTail {
  private lastId = '0-0';
  private stopped = false;
  private loop: Promise<void> | undefined;

  private readonly redis: Redis;
  private readonly key: string;
  private readonly onEntry: (entry: PushEntry) => void;
  private readonly log: PushTailLog;
  private readonly blockMs;
  constructor(
    redis: Redis,
    key: string,
    onEntry: (entry: PushEntry) => void,
    log: PushTailLog,
    blockMs = 5000,
  ) {
    this.redis = redis;
    this.key = key;
    this.onEntry = onEntry;
    this.log = log;
    this.blockMs = blockMs;
  }

  /** Resolves once the start position is fixed: entries appended after this are delivered. */
  async start(): Promise<void> {
    // Not the literal `$`: re-issuing `$` after an empty BLOCK would skip entries added in between.
    const last = (await this.redis.xrevrange(this.key, '+', '-', 'COUNT', 1)) as [string, string[]][];
    this.lastId = last[0]?.[0] ?? '0-0';
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const reply = await this.redis.xread(
          'COUNT',
          500,
          'BLOCK',
          this.blockMs,
          'STREAMS',
          this.key,
          this.lastId,
        );
        for (const [, entries] of reply ?? []) {
          for (const [id, fields] of entries) {
            this.lastId = id;
            const entry = parsePushEntry(fields);
            if (entry) this.onEntry(entry);
            else this.log.warn({ id }, 'ignoring malformed push entry');
          }
        }
      } catch (err) {
        if (this.stopped) break;
        this.log.warn({ err }, 'push stream read failed; retrying from the last id');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // disconnect (not quit): quit would wait for the pending BLOCK to time out.
    this.redis.disconnect();
    await this.loop;
  }
}
