import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RateLimit } from '../domain/limits.ts';

/** Where an agent's latest socket is: the replica holding it, and the socket. */
export interface Owner {
  replica: string;
  conn: string;
}

// Swap in the new owner unless the signed timestamp does not move forward (a replayed ANNOUNCE).
const CLAIM = `
local last = redis.call('GET', KEYS[2])
if last and tonumber(last) >= tonumber(ARGV[3]) then return {0, false} end
redis.call('SET', KEYS[2], ARGV[3], 'EX', 900)
local old = redis.call('HGET', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {1, old}`;
// Removes the owner only if it is still this socket (a replaced socket's close changes nothing).
const RELEASE = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0`;
const HIT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

const parseOwner = (v: string | null | undefined): Owner | undefined => {
  if (!v) return undefined;
  const [replica, conn] = v.split('|');
  return replica && conn ? { replica, conn } : undefined;
};

/**
 * The relay's routing state in Redis, shared by every replica (ADR 0019): which replica holds each
 * agent's socket, which replicas are alive, which replica holds each client session, the last signed
 * ANNOUNCE timestamp per address, and the rate-limit counters. Ephemeral by design: the durable
 * directory is the read model; this is rebuilt by agents reconnecting.
 */
export class Registry {
  private readonly redis: Redis;
  private readonly prefix: string;
  readonly replicaId: string;
  constructor(redis: Redis, prefix: string, replicaId: string) {
    this.redis = redis;
    this.prefix = prefix;
    this.replicaId = replicaId;
  }

  private key = (...parts: string[]) => `${this.prefix}agents:${parts.join(':')}`;

  /** `ok: false` when `timestamp` is not newer than the last accepted one (replay). */
  async claim(address: string, conn: string, timestamp: number): Promise<{ ok: boolean; previous?: Owner }> {
    const [ok, old] = (await this.redis.eval(
      CLAIM,
      2,
      this.key('owners'),
      this.key('ts', address),
      address,
      `${this.replicaId}|${conn}`,
      String(timestamp),
    )) as [number, string | null];
    const previous = parseOwner(old);
    return { ok: ok === 1, ...(previous ? { previous } : {}) };
  }

  /** true when `conn` was the agent's owner and no longer is. */
  async release(address: string, owner: Owner): Promise<boolean> {
    const n = await this.redis.eval(
      RELEASE,
      1,
      this.key('owners'),
      address,
      `${owner.replica}|${owner.conn}`,
    );
    return n === 1;
  }

  async owner(address: string): Promise<Owner | undefined> {
    return parseOwner(await this.redis.hget(this.key('owners'), address));
  }

  async owners(): Promise<Map<string, Owner>> {
    const all = await this.redis.hgetall(this.key('owners'));
    const out = new Map<string, Owner>();
    for (const [address, v] of Object.entries(all)) {
      const o = parseOwner(v);
      if (o) out.set(address, o);
    }
    return out;
  }

  /** This replica is alive for `ttlMs` more (renewed well before it lapses). */
  async heartbeat(ttlMs: number): Promise<void> {
    await this.redis.set(this.key('replica', this.replicaId), String(Date.now()), 'PX', ttlMs);
  }

  /** This replica is stopping: the others sweep its agents now rather than after the heartbeat lapses. */
  async retire(): Promise<void> {
    await this.redis.del(this.key('replica', this.replicaId));
  }

  async replicaAlive(replica: string): Promise<boolean> {
    return (await this.redis.exists(this.key('replica', replica))) === 1;
  }

  /**
   * Binds a client session of `address` to this replica. Refused while another live holder has it
   * (a session id names one conversation; a second socket presenting it must not read its replies).
   */
  async bindSession(address: string, sid: string, holder: string): Promise<boolean> {
    const key = this.key('sess', address, sid);
    const value = `${this.replicaId}|${holder}`;
    if ((await this.redis.set(key, value, 'EX', 86_400, 'NX')) === 'OK') return true;
    const current = parseOwner(await this.redis.get(key));
    if (current && (await this.replicaAlive(current.replica))) return false;
    await this.redis.set(key, value, 'EX', 86_400);
    return true;
  }

  async sessionReplica(address: string, sid: string): Promise<string | undefined> {
    return parseOwner(await this.redis.get(this.key('sess', address, sid)))?.replica;
  }

  async unbindSession(address: string, sid: string, holder: string): Promise<void> {
    await this.redis.eval(
      `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`,
      1,
      this.key('sess', address, sid),
      `${this.replicaId}|${holder}`,
    );
  }

  /** The last recorded announcement of `address`: the socket it named and a digest of its content. */
  async recorded(address: string): Promise<{ conn: string; digest: string } | undefined> {
    const v = await this.redis.get(this.key('rec', address));
    const [conn, digest] = v?.split('|') ?? [];
    return conn && digest ? { conn, digest } : undefined;
  }

  /** Remembers what the log holds for `address` now (a day: an agent silent longer is recorded afresh). */
  async record(address: string, conn: string, content: string): Promise<void> {
    await this.redis.set(this.key('rec', address), `${conn}|${digestOf(content)}`, 'EX', 86_400);
  }

  /** The agent is still online: its recorded announcement is remembered for another day. */
  async keepRecord(address: string): Promise<void> {
    await this.redis.expire(this.key('rec', address), 86_400);
  }

  /** A fixed-window limiter: true while `key` is within `limit`. */
  async allow(kind: string, subject: string, limit: RateLimit): Promise<boolean> {
    const n = (await this.redis.eval(
      HIT,
      1,
      this.key('rl', kind, subject),
      String(limit.windowMs),
    )) as number;
    return n <= limit.max;
  }

  channel(replica: string): string {
    return this.key('bus', replica);
  }
}

export const digestOf = (content: string) => createHash('sha256').update(content).digest('base64url');
