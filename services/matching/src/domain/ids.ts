import { v5 as uuidv5 } from 'uuid';

/**
 * Deterministic ids of the matching context, derived from a thread id (which is keyed by the
 * deployment's secret: src/commands/threadIds.ts), so they tell nothing the thread id does not.
 * Fixed namespace: changing it would change every id on replay. Names are prefixed by their kind,
 * so two kinds never collide.
 */
const MATCHING_NAMESPACE = '3d0f4a8e-8b1c-4f2a-9c57-2e6b1d9a7c40';

/** The two goferIds sorted: a pair has one thread whichever side discovery starts from. */
export function orderPair(goferId1: string, goferId2: string): [string, string] {
  return goferId1 < goferId2 ? [goferId1, goferId2] : [goferId2, goferId1];
}

/** One match per thread: both sides requesting at once, or a retried accept, land on the same ids. */
export const matchIdFor = (threadId: string) => uuidv5(`match:${threadId}`, MATCHING_NAMESPACE);

/** The conversation the conversations context opens for the match (created idempotently by id). */
export const conversationIdFor = (threadId: string) => uuidv5(`conversation:${threadId}`, MATCHING_NAMESPACE);

/** A session turn's id: a redelivered session step appends nothing twice. */
export const sessionTurnIdFor = (threadId: string, turnIndex: number) =>
  uuidv5(`turn:${threadId}:${turnIndex}`, MATCHING_NAMESPACE);

/** The `messageId` of a summary card version (the `session_summary` payload's messageId). */
export const summaryMessageIdFor = (threadId: string, goferId: string, version: number) =>
  uuidv5(`summary:${threadId}:${goferId}:${version}`, MATCHING_NAMESPACE);
