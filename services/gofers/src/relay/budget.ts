import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export interface RelayBudgetLimits {
  /** INPUTs one caller address may send one Gofer per minute. */
  callerPerMinute: number;
  /** Turns one Gofer answers per hour over all its callers. */
  goferPerHour: number;
  /** Turns all the Gofers of one owner account answer per hour over all their callers. */
  accountPerHour: number;
  /**
   * Turns one client address may ask one Gofer per minute whatever identity it declares (A2A,
   * ADR 0035: a fresh bearer token costs nothing); unset, addresses are not counted.
   */
  addressPerMinute?: number;
}

export const CALLER_LIMITED = 'Rate limited: too many messages from this caller, try again in a minute';
export const ADDRESS_LIMITED = 'Rate limited: too many messages from this address, try again in a minute';
export const GOFER_LIMITED = 'Rate limited: this agent is answering no more callers now, try again later';

/**
 * What a relay (or A2A) turn may cost, counted in Redis across the gofers processes. The Gofer's and
 * the owner's windows are one whoever asks: relay and A2A callers spend from the same ones. A caller address is
 * free to make (an Ed25519 key), so the per-caller count alone bounds nothing: every turn also
 * spends from its Gofer's hourly budget and from its owner's, whoever the caller is. A refused turn
 * spends nothing of the budgets (the caller's own count still moves).
 */
export class RelayBudget {
  private readonly caller: RateLimiterRedis;
  private readonly gofer: RateLimiterRedis;
  private readonly account: RateLimiterRedis;
  private readonly address: RateLimiterRedis | null;

  constructor(redis: Redis, prefix: string, limits: RelayBudgetLimits) {
    const limiter = (name: string, points: number, duration: number) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${prefix}gofers:relay:${name}`,
        points,
        duration,
      });
    this.caller = limiter('caller', limits.callerPerMinute, 60);
    this.gofer = limiter('gofer', limits.goferPerHour, 3600);
    this.account = limiter('account', limits.accountPerHour, 3600);
    this.address = limits.addressPerMinute ? limiter('address', limits.addressPerMinute, 60) : null;
  }

  /** Spends one turn, or answers why not (the ERROR the caller gets). */
  async spend(turn: {
    goferId: string;
    accountId: string;
    caller: string;
    /** The client address key, counted apart from the caller's declared identity. */
    address?: string;
  }): Promise<string | null> {
    if (!(await taken(this.caller, `${turn.goferId}:${turn.caller}`))) return CALLER_LIMITED;
    if (
      this.address &&
      turn.address !== undefined &&
      !(await taken(this.address, `${turn.goferId}:${turn.address}`))
    )
      return ADDRESS_LIMITED;
    if (!(await taken(this.gofer, turn.goferId))) return GOFER_LIMITED;
    if (!(await taken(this.account, turn.accountId))) {
      // The Gofer's point goes back: the turn is not answered.
      await this.gofer.reward(turn.goferId, 1);
      return GOFER_LIMITED;
    }
    return null;
  }
}

/** Consumes one point; false when the window is spent (any other failure is thrown). */
async function taken(limiter: RateLimiterRedis, key: string): Promise<boolean> {
  try {
    await limiter.consume(key, 1);
    return true;
  } catch (res) {
    if (res instanceof RateLimiterRes) return false;
    throw res;
  }
}
