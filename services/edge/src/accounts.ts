import type { FastifyRequest } from 'fastify';
import { AuthError, bearerToken, type Authenticator } from '@oan/auth';

/**
 * Which account a request's credential names, for the edge's per-account state (idempotency records,
 * rate counters; ADR 0017). Resolved exactly as the services do (libs/auth, the credential view, no
 * cache), so an API key and a JWT of one account share that state, and a missing, unknown, revoked or
 * expired credential names no account: such a request is passed on untouched and the owner answers
 * it (401) as in v1. Authorization stays with the owners; this only names the account.
 */
export class AccountResolver {
  private readonly resolved = new WeakMap<FastifyRequest, Promise<string | null>>();

  private readonly authenticator: Authenticator;
  constructor(authenticator: Authenticator) {
    this.authenticator = authenticator;
  }

  /** Memoized per request: the rate limit and the idempotency check share one lookup. */
  accountOf(req: FastifyRequest): Promise<string | null> {
    let found = this.resolved.get(req);
    if (!found) this.resolved.set(req, (found = this.lookup(req.headers.authorization)));
    return found;
  }

  private async lookup(header: string | undefined): Promise<string | null> {
    const token = bearerToken(header);
    if (token === null) return null;
    try {
      return (await this.authenticator.authenticate(token)).accountId;
    } catch (err) {
      if (err instanceof AuthError) return null;
      throw err;
    }
  }

  drain(): Promise<void> {
    return this.authenticator.drain();
  }
}
