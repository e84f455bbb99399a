import { randomInt, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { sha256Hex } from './ids.ts';

/** Email codes: 6 digits, 5 min TTL, 60 s resend cooldown; a code dies after 5 wrong attempts. */
export const EMAIL_CODE_TTL_S = 300;
export const EMAIL_COOLDOWN_S = 60;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;

export const newEmailCode = () => randomInt(0, 1_000_000).toString().padStart(6, '0');

// Counts the attempt before the caller compares, so a burst of parallel guesses still gets at most
// MAX comparisons. Returns {hash, attempt}, or nil when there is no code or the budget is spent.
// It never deletes: the attempt numbered MAX always ends in a delete (consumed or burnt) by its
// caller, and a right code racing with later attempts must still win.
const RESERVE_ATTEMPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return nil end
local a = redis.call('HINCRBY', KEYS[1], 'a', 1)
if a > tonumber(ARGV[1]) then return nil end
return {redis.call('HGET', KEYS[1], 'h'), a}`;

// Deletes the code only if it is still the one the caller saw (a newer code may have replaced it).
// The first of two concurrent verifies gets 1, the other 0: a code is consumed exactly once.
const DELETE_IF_HASH = `
if redis.call('HGET', KEYS[1], 'h') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Email verification codes in Redis: `<prefix>email-code:<email>` holds only the code's SHA-256 and
 * the attempt count; `<prefix>email-cooldown:<email>` is the resend cooldown.
 */
export class EmailCodeStore {
  private readonly redis: Redis;
  private readonly prefix: string;
  constructor(redis: Redis, prefix: string) {
    this.redis = redis;
    this.prefix = prefix;
  }

  codeKey = (email: string) => `${this.prefix}email-code:${email}`;
  cooldownKey = (email: string) => `${this.prefix}email-cooldown:${email}`;

  /** False when a code was sent to this email less than 60 s ago. */
  async startCooldown(email: string): Promise<boolean> {
    return (await this.redis.set(this.cooldownKey(email), '1', 'EX', EMAIL_COOLDOWN_S, 'NX')) === 'OK';
  }

  async endCooldown(email: string): Promise<void> {
    await this.redis.del(this.cooldownKey(email));
  }

  /** Replaces any previous code for this email. */
  async save(email: string, codeHash: string): Promise<void> {
    const key = this.codeKey(email);
    await this.redis.multi().del(key).hset(key, 'h', codeHash, 'a', 0).expire(key, EMAIL_CODE_TTL_S).exec();
  }

  /** Removes the code if it is still `codeHash` (a failed mail must not leave a code nobody knows). */
  async discard(email: string, codeHash: string): Promise<boolean> {
    return (await this.redis.eval(DELETE_IF_HASH, 1, this.codeKey(email), codeHash)) === 1;
  }

  /** True exactly once for the right code; wrong, expired, burnt or consumed codes are false. */
  async consume(email: string, code: string): Promise<boolean> {
    const key = this.codeKey(email);
    const reserved = (await this.redis.eval(RESERVE_ATTEMPT, 1, key, EMAIL_CODE_MAX_ATTEMPTS)) as
      [string, number] | null;
    if (!reserved) return false;
    const [storedHash, attempt] = reserved;
    const givenHash = sha256Hex(code);
    if (hashesEqual(storedHash, givenHash)) return this.discard(email, storedHash);
    if (attempt >= EMAIL_CODE_MAX_ATTEMPTS) await this.discard(email, storedHash);
    return false;
  }
}

/** Constant-time comparison of two hex digests. */
export function hashesEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && ba.length > 0 && timingSafeEqual(ba, bb);
}
