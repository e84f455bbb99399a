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

/** Entries one read brings at most. */
const PAGE = 500;

/** `gatherMs` of the tails that only hurry background work on: webhook delivery, runtime wakes. */
export const BACKGROUND_TAIL_GATHER_MS = 50;

/**
 * Tails the push stream with XREAD BLOCK on a dedicated connection (a blocked connection can serve
 * nothing else): the gateways, for their sockets and long-polls, and the webhook delivery and the
 * runtimes, as a wake-up. Starts after the stream's last entry at start-up and remembers the last id read, so a Redis
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
  /**
   * After a read that did not fill a page, wait this long before reading again (0: read again at
   * once), so that under load one read brings many entries. A tail that only hurries background
   * work on (webhooks, runtime wakes) takes the entries up to this much later (ADR 0051).
   */
  private readonly gatherMs;
  private endGathering: () => void = () => undefined;
  constructor(
    redis: Redis,
    key: string,
    onEntry: (entry: PushEntry) => void,
    log: PushTailLog,
    { blockMs = 5000, gatherMs = 0 }: { blockMs?: number; gatherMs?: number } = {},
  ) {
    this.redis = redis;
    this.key = key;
    this.onEntry = onEntry;
    this.log = log;
    this.blockMs = blockMs;
    this.gatherMs = gatherMs;
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
          PAGE,
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
        const read = reply?.reduce((n, [, entries]) => n + entries.length, 0) ?? 0;
        if (this.gatherMs > 0 && read < PAGE && !this.stopped) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.gatherMs);
            this.endGathering = () => {
              clearTimeout(timer);
              resolve();
            };
          });
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
    this.endGathering();
    // disconnect (not quit): quit would wait for the pending BLOCK to time out.
    this.redis.disconnect();
    await this.loop;
  }
}
