/** The fleet's process kinds, their replicas' names, and `OAN_REPLICAS` (fleet.ts plans them). */
/** The kinds of process the fleet runs, each as one replica or several. */
export const PROCESS_KINDS = [
  'auth',
  'gofers',
  'matching',
  'conversations',
  'runtimes',
  'outbox',
  'projector',
  'gateway',
  'agents',
  'edge',
] as const;
export type ProcessKind = (typeof PROCESS_KINDS)[number];
/** `auth`, `auth2`, `auth3`, …; the gateways and the agent relay count from 1 (`gateway1`, `gateway2`). */
export type ProcessName = ProcessKind | `${ProcessKind}${number}`;
/** Replicas per kind; a kind not named runs its default (the gateways and the agent relay two, the rest one). */
export type ReplicaCounts = Partial<Record<ProcessKind, number>>;

export const DEFAULT_REPLICAS: ReplicaCounts = { gateway: 2, agents: 2 };
const NUMBERED_FROM_ONE: readonly ProcessKind[] = ['gateway', 'agents'];

/** The name of replica `i` (from 1) of a kind. */
export function replicaName(kind: ProcessKind, i: number): ProcessName {
  return i === 1 && !NUMBERED_FROM_ONE.includes(kind) ? kind : `${kind}${i}`;
}

/** `OAN_REPLICAS=auth=2,gofers=2`: replicas per kind; an unknown kind or a count below 1 is refused. */
export function parseReplicas(text: string | undefined): ReplicaCounts {
  const counts: ReplicaCounts = {};
  for (const part of (text ?? '').split(',').map((p) => p.trim())) {
    if (!part) continue;
    const [kind, n] = part.split('=').map((x) => x.trim());
    const count = Number(n);
    if (!PROCESS_KINDS.includes(kind as ProcessKind) || !Number.isInteger(count) || count < 1 || count > 9) {
      throw new Error(`OAN_REPLICAS: "${part}" is not <kind>=<1-9> (kinds: ${PROCESS_KINDS.join(', ')})`);
    }
    counts[kind as ProcessKind] = count;
  }
  return counts;
}
