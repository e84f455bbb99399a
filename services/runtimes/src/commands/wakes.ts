import DataLoader from 'dataloader';
import type { Redis } from 'ioredis';
import { publishRuntimeWake } from '@oan/projection';
import { REPLY_TYPES, wants } from '../domain/policy.ts';
import { listRuntimesOf, ownRuntime, type RuntimeRow } from '../infra/runtimeStore.ts';
import { claimableCount, leasesRunOut } from '../infra/wakeStore.ts';
import type { RuntimesContext } from './context.ts';
import { catchUp } from './jobs.ts';

export interface WakeLog {
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** How long a replica's claim on publishing one wake is kept (every replica tails the same stream). */
const CLAIM_MS = 60_000;

/**
 * Tells the fleet that a runtime has jobs to claim (`runtime_jobs` on opted-in sockets, and held
 * claims in other runtimes processes): when an envelope its policy wants is stored, when a job is
 * given back, and when a lease runs out. Every runtimes replica sees the same push entries and
 * sweeps the same leases, so each wake is claimed once in Redis before it is published.
 */
export class JobWakes {
  private sweptUpTo: Date;
  private readonly ctx: RuntimesContext;
  private readonly redis: Redis;
  private readonly prefix: string;
  private readonly log: WakeLog;
  private readonly runtimesOf: DataLoader<string, RuntimeRow[]>;
  constructor(ctx: RuntimesContext, redis: Redis, prefix: string, log: WakeLog) {
    this.ctx = ctx;
    this.redis = redis;
    this.prefix = prefix;
    this.log = log;
    this.sweptUpTo = ctx.now();
    // One XREAD brings many envelopes at once under load: their accounts' runtimes are read in one
    // statement (batched per tick, never cached: a runtime made a moment ago counts).
    this.runtimesOf = new DataLoader(
      async (accounts) => {
        const byAccount = await listRuntimesOf(this.ctx.orm.em.fork(), accounts);
        return accounts.map((a) => byAccount.get(a) ?? []);
      },
      { cache: false },
    );
  }

  /** A stored envelope (a push entry): a wake for every runtime of the account that wants it. */
  async onEnvelope(accountId: string, seq: bigint, text: string): Promise<void> {
    const head = JSON.parse(text) as { type?: string; goferId?: string; reply?: unknown };
    const facts = { type: head.type ?? '', goferId: head.goferId, hasReply: head.reply !== undefined };
    // most envelopes are not decisions: no database read for them
    if (!facts.hasReply || !(REPLY_TYPES as readonly string[]).includes(facts.type)) return;
    const runtimes = await this.runtimesOf.load(accountId);
    for (const r of runtimes) {
      if (!wants(r.policy, facts)) continue;
      if (!(await this.claim(`${r.id}:e${seq}`))) continue;
      // the job is made now (the same one a claim would make), so the count includes it
      await catchUp(this.ctx, accountId, r.id);
      await this.publish(accountId, r.id, r.name);
    }
  }

  /** A job given back by a finish here (`released`, or `failed` with attempts left). */
  async onGivenBack(accountId: string, runtimeId: string): Promise<void> {
    const r = await ownRuntime(this.ctx.orm.em.fork(), accountId, runtimeId);
    if (r) await this.publish(accountId, r.id, r.name);
  }

  /** Leases that ran out since the last sweep: their jobs wait for a claim again. */
  async sweep(): Promise<void> {
    const upTo = this.ctx.now();
    const ranOut = await leasesRunOut(this.ctx.orm.em.fork(), this.sweptUpTo, upTo);
    this.sweptUpTo = upTo;
    const seen = new Set<string>();
    for (const j of ranOut) {
      if (seen.has(j.runtimeId) || !(await this.claim(`${j.jobId}:l${j.version}`))) continue;
      seen.add(j.runtimeId);
      await this.onGivenBack(j.accountId, j.runtimeId);
    }
  }

  /** Runs `work`, logging a failure instead of throwing: a lost wake costs a worker one recheck. */
  guard(work: Promise<void>): void {
    work.catch((err: unknown) => this.log.warn({ err }, 'runtime wake failed'));
  }

  private async claim(key: string): Promise<boolean> {
    const set = await this.redis.set(`${this.prefix}runtime-wake:${key}`, '1', 'PX', CLAIM_MS, 'NX');
    return set === 'OK';
  }

  private async publish(accountId: string, runtimeId: string, name: string): Promise<void> {
    const queued = await claimableCount(this.ctx.orm.em.fork(), runtimeId, this.ctx.now());
    if (queued > 0) await publishRuntimeWake(this.redis, this.prefix, accountId, { runtimeId, name, queued });
  }
}
