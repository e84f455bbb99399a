import type { Redis } from 'ioredis';

/** Tells every gateway about a revocation so it disconnects the key's sockets. */
export interface RevocationPublisher {
  keyRevoked(accountId: string, apiKeyId: string): Promise<void>;
}

/**
 * `XADD <prefix>push * t revoke a <accountId> k <apiKeyId>` on the stream every gateway tails
 * (docs/architecture.md, Redis). Bounded in time: a Redis that hangs must not hold the 204 back.
 */
export function createRedisRevocationPublisher(
  redis: Redis,
  prefix: string,
  timeoutMs = 2000,
): RevocationPublisher {
  return {
    async keyRevoked(accountId, apiKeyId) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`XADD push timed out after ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        await Promise.race([
          redis.xadd(`${prefix}push`, '*', 't', 'revoke', 'a', accountId, 'k', apiKeyId),
          timeout,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
