import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A final answer kept for replay (draft §2.6): status, content type and body bytes. */
export interface StoredResponse {
  status: number;
  contentType: string | null;
  /** base64 */
  body: string;
}

export type Begun =
  | { kind: 'started'; lock: string }
  | { kind: 'inFlight'; fingerprint: string }
  | { kind: 'done'; fingerprint: string; response: StoredResponse };

interface DoneEntry {
  f: string;
  r: StoredResponse;
}

// One entry per (account, key): `inflight:<fingerprint>:<token>` while the first request runs (a
// short lock that its edge renews), then the JSON of the answer for the retention time. Each step is
// one script, so two racing requests cannot both start, and only the lock's holder settles it.
const BEGIN = `
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`;
const SETTLE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1`;
const EXTEND = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`;

type Scripted = Redis & {
  oanIdemBegin(key: string, value: string, ms: number): Promise<string | null>;
  oanIdemSettle(key: string, lock: string, value: string, ms: number): Promise<number>;
  oanIdemExtend(key: string, lock: string, ms: number): Promise<number>;
};

export interface IdempotencyStoreOptions {
  prefix: string;
  retentionMs: number;
  /** How long a lock outlives the edge that took it (renewed while its request runs). */
  lockMs: number;
}

/** The idempotency records in Redis, shared by every edge replica (ADR 0017). */
export class IdempotencyStore {
  private readonly redis: Scripted;

  private readonly opts: IdempotencyStoreOptions;
  constructor(redis: Redis, opts: IdempotencyStoreOptions) {
    this.opts = opts;
    this.redis = redis as Scripted;
    if (typeof this.redis.oanIdemBegin !== 'function') {
      redis.defineCommand('oanIdemBegin', { numberOfKeys: 1, lua: BEGIN });
      redis.defineCommand('oanIdemSettle', { numberOfKeys: 1, lua: SETTLE });
      redis.defineCommand('oanIdemExtend', { numberOfKeys: 1, lua: EXTEND });
    }
  }

  /** The record's name: the key is hashed, so any key of any length makes one short, safe name. */
  recordOf(accountId: string, key: string): string {
    return `${this.opts.prefix}idem:${accountId}:${createHash('sha256').update(key).digest('base64url')}`;
  }

  async begin(record: string, fingerprint: string): Promise<Begun> {
    const lock = `inflight:${fingerprint}:${randomUUID()}`;
    const found = await this.redis.oanIdemBegin(record, lock, this.opts.lockMs);
    if (found === null) return { kind: 'started', lock };
    if (found.startsWith('inflight:')) return { kind: 'inFlight', fingerprint: found.split(':')[1]! };
    const done = JSON.parse(found) as DoneEntry;
    return { kind: 'done', fingerprint: done.f, response: done.r };
  }

  /** Keeps the answer for the retention time; false when the lock was lost (it expired). */
  async complete(record: string, lock: string, response: StoredResponse): Promise<boolean> {
    const fingerprint = lock.split(':')[1]!;
    const entry: DoneEntry = { f: fingerprint, r: response };
    return (await this.redis.oanIdemSettle(record, lock, JSON.stringify(entry), this.opts.retentionMs)) === 1;
  }

  /** Frees the key for a retry (the first attempt failed with a 5xx or never reached its owner). */
  async release(record: string, lock: string): Promise<void> {
    await this.redis.oanIdemSettle(record, lock, '', 0);
  }

  async extend(record: string, lock: string): Promise<void> {
    await this.redis.oanIdemExtend(record, lock, this.opts.lockMs);
  }
}
