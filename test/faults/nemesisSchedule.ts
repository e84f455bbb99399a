import { PROCESS_KINDS, replicaName, type ProcessKind, type ProcessName } from '@oan/testing';

/** The dependencies a process reaches over a link of its own (linkProxy.ts). */
export type Dependency = 'postgres' | 'redis' | 'kafka';

/** Which kinds reach which dependency (the outbox publisher has no Redis; five kinds use Kafka). */
export const LINKS: Record<ProcessKind, readonly Dependency[]> = {
  auth: ['postgres', 'redis'],
  gofers: ['postgres', 'redis', 'kafka'],
  matching: ['postgres', 'redis', 'kafka'],
  conversations: ['postgres', 'redis', 'kafka'],
  runtimes: ['postgres', 'redis'],
  outbox: ['postgres', 'kafka'],
  projector: ['postgres', 'redis', 'kafka'],
  gateway: ['postgres', 'redis'],
  agents: ['postgres', 'redis'],
  edge: ['postgres', 'redis'],
};

/** Replicas of every kind in the nemesis fleet. */
export const REPLICAS = 2;

export type Fault =
  /** kill -9, started again once the hold is over. */
  | { kind: 'kill'; target: ProcessName }
  /** SIGSTOP, SIGCONT once the hold is over. */
  | { kind: 'pause'; target: ProcessName }
  /** The file's own Kafka broker killed -9, started again once the hold is over. */
  | { kind: 'broker' }
  /** One process's link to a dependency cut (connections destroyed, new ones dropped). */
  | { kind: 'cut'; target: ProcessName; dependency: Dependency }
  /** One process's link to a dependency delaying every chunk by `ms`. */
  | { kind: 'delay'; target: ProcessName; dependency: Dependency; ms: number };

export interface Step {
  /** When the fault starts, from the start of the load. */
  atMs: number;
  /** How long it lasts before it is lifted. */
  holdMs: number;
  fault: Fault;
}

/** mulberry32: a small seeded PRNG, uniform in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher–Yates with the given generator. */
function shuffled<T>(xs: readonly T[], random: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/**
 * What a kind is busy with after a fault is lifted, in the plan: a restart takes a process's start-up
 * (seconds on a loaded machine), a broker's the JVM's. Keeps the plan from faulting both replicas of a
 * kind at once; the runner also waits for the one before on the same kind (nemesis.e2e.test.ts).
 */
const SETTLE_MS = { kill: 15_000, broker: 20_000, other: 1_000 };

/**
 * The schedule of a run: a pure function of `seed` and `seconds` (same arguments, same steps).
 * A fault is drawn every 1.5–4.5 s and kept when at most one other is under way and none on its
 * kind (or the broker); every fault is lifted before the end.
 */
export function nemesisSchedule(seed: number, seconds: number): Step[] {
  const random = mulberry32(seed);
  const between = (lo: number, hi: number) => Math.round(lo + random() * (hi - lo));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const end = seconds * 1000;
  const busy: { who: ProcessKind | 'broker'; until: number }[] = [];
  const steps: Step[] = [];
  // Kinds come from a shuffled deck, dealt again when empty: a short run still faults most kinds.
  const deck: ProcessKind[] = [];
  for (let at = between(1000, 3000); at < end; at += between(1500, 4500)) {
    const roll = random();
    if (deck.length === 0) deck.push(...shuffled(PROCESS_KINDS, random));
    const kind = deck.pop()!;
    const target = replicaName(kind, between(1, REPLICAS));
    let fault: Fault;
    let holdMs: number;
    if (roll < 0.25) [fault, holdMs] = [{ kind: 'kill', target }, between(0, 2000)];
    else if (roll < 0.45) [fault, holdMs] = [{ kind: 'pause', target }, between(1000, 4000)];
    else if (roll < 0.55) [fault, holdMs] = [{ kind: 'broker' }, between(1000, 4000)];
    else if (roll < 0.8)
      [fault, holdMs] = [{ kind: 'cut', target, dependency: pick(LINKS[kind]) }, between(1000, 5000)];
    else
      [fault, holdMs] = [
        { kind: 'delay', target, dependency: pick(LINKS[kind]), ms: between(20, 400) },
        between(2000, 6000),
      ];
    const who = fault.kind === 'broker' ? 'broker' : kind;
    const now = busy.filter((b) => b.until > at);
    if (now.length >= 2 || now.some((b) => b.who === who) || at + holdMs > end) continue;
    busy.push({
      who,
      until: at + holdMs + SETTLE_MS[fault.kind === 'kill' || fault.kind === 'broker' ? fault.kind : 'other'],
    });
    steps.push({ atMs: at, holdMs, fault });
  }
  return steps;
}

/** One line per step, for the log and the failure messages. */
export function describeStep(s: Step): string {
  const f = s.fault;
  const what =
    f.kind === 'broker'
      ? 'broker killed -9'
      : f.kind === 'kill'
        ? `${f.target} killed -9`
        : f.kind === 'pause'
          ? `${f.target} paused`
          : f.kind === 'cut'
            ? `${f.target}'s ${f.dependency} link cut`
            : `${f.target}'s ${f.dependency} link delayed ${f.ms} ms`;
  return `+${(s.atMs / 1000).toFixed(1)} s ${what} for ${(s.holdMs / 1000).toFixed(1)} s`;
}
