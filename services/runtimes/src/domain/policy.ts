/**
 * A runtime's policy: which of the account's decisions become its jobs, and how long a worker may
 * hold one. Pure: the HTTP layer validates the ranges, this module normalises and matches.
 */

/** The OAN event types that carry a `reply` (OAN-REFERENCE 8.6): the only ones a runtime can take. */
export const REPLY_TYPES = [
  'gofer_message',
  'gofer_question',
  'pair_proposed',
  'match_request',
  'relay_message',
] as const;
export type ReplyType = (typeof REPLY_TYPES)[number];

export const LEASE_SECONDS = { min: 5, max: 3600, default: 60 } as const;
export const MAX_ATTEMPTS = { min: 1, max: 20, default: 3 } as const;
/** How long a runtime may go without a live worker (a claim or heartbeat) before its jobs go to the owner. */
export const GRACE_SECONDS = { min: 30, max: 86_400, default: 300 } as const;

export interface Policy {
  types: ReplyType[];
  /** Only events of these Gofers (by the envelope's `goferId`); absent: every Gofer and none. */
  goferIds?: string[];
  maxAttempts: number;
  leaseSeconds: number;
  graceSeconds: number;
}

export interface PolicyInput {
  types: ReplyType[];
  goferIds?: string[] | undefined;
  maxAttempts?: number | undefined;
  leaseSeconds?: number | undefined;
  graceSeconds?: number | undefined;
}

const sortedUnique = <T extends string>(xs: readonly T[]): T[] => [...new Set(xs)].sort();

/** Defaults filled in, lists sorted and deduplicated: two inputs meaning the same policy are equal. */
export function normalizePolicy(input: PolicyInput): Policy {
  return {
    types: sortedUnique(input.types),
    ...(input.goferIds === undefined ? {} : { goferIds: sortedUnique(input.goferIds) }),
    maxAttempts: input.maxAttempts ?? MAX_ATTEMPTS.default,
    leaseSeconds: input.leaseSeconds ?? LEASE_SECONDS.default,
    // a runtime stored before the grace existed reads with the default
    graceSeconds: input.graceSeconds ?? GRACE_SECONDS.default,
  };
}

export function samePolicy(a: Policy, b: Policy): boolean {
  return JSON.stringify(normalizePolicy(a)) === JSON.stringify(normalizePolicy(b));
}

/** What a policy looks at in an OAN envelope. */
export interface EnvelopeFacts {
  type: string;
  goferId?: string | undefined;
  hasReply: boolean;
}

/** Whether an envelope becomes a job: a decision (it carries a `reply`) of a wanted type and Gofer. */
export function wants(policy: Policy, e: EnvelopeFacts): boolean {
  if (!e.hasReply) return false;
  if (!(policy.types as readonly string[]).includes(e.type)) return false;
  if (policy.goferIds === undefined) return true;
  return e.goferId !== undefined && policy.goferIds.includes(e.goferId);
}
