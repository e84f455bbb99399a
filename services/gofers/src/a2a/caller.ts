import { createHash } from 'node:crypto';
import type { ServerCallContext, User } from '@a2a-js/sdk/server';

/** A bearer token a caller keeps to name itself: any opaque text of this length. */
export const BEARER_MIN = 16;
export const BEARER_MAX = 256;

/**
 * Who calls a Gofer over A2A (ADR 0035). A caller names itself with `Authorization: Bearer <any
 * opaque text it keeps>`, identity `key:<sha256 hex>` (the token itself is never stored or logged);
 * without one it is its client address as the edge forwarded it, `addr:<address>`. Neither is an
 * account: an identity costs nothing, so every turn also spends from budgets no identity can renew.
 */
export interface A2ACaller {
  callerId: string;
  /** The client address key (an IPv6 client by its /64): its own count, whatever the identity. */
  address: string;
}

/** The caller of a request, or a reason to refuse it (a malformed Authorization header). */
export function callerFrom(
  authorization: string | undefined,
  address: string,
): { caller: A2ACaller } | { refused: string } {
  if (authorization === undefined || authorization.trim() === '')
    return { caller: { callerId: `addr:${address}`, address } };
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  const token = m?.[1];
  if (!token || token.length < BEARER_MIN || token.length > BEARER_MAX)
    return {
      refused: `Authorization must be "Bearer <token>", the token ${BEARER_MIN}-${BEARER_MAX} characters`,
    };
  const hash = createHash('sha256').update(token, 'utf8').digest('hex');
  return { caller: { callerId: `key:${hash}`, address } };
}

/** The SDK's user of a call: its name is the caller id, which scopes its tasks and event buses. */
export class CallerUser implements User {
  readonly caller: A2ACaller;
  constructor(caller: A2ACaller) {
    this.caller = caller;
  }
  get isAuthenticated(): boolean {
    return this.caller.callerId.startsWith('key:');
  }
  get userName(): string {
    return this.caller.callerId;
  }
}

/** The caller a call was built for (every call of ours carries a CallerUser). */
export function callerOfCall(context: ServerCallContext): A2ACaller {
  const user = context.user;
  if (!(user instanceof CallerUser)) throw new Error('an A2A call without its caller');
  return user.caller;
}

export const callerOf = (context: ServerCallContext): string => callerOfCall(context).callerId;
