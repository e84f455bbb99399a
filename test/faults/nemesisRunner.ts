import type { ProcessName, TestFleet } from '@oan/testing';
import type { OwnKafka } from './kafkaServer.ts';
import type { LinkProxy } from './linkProxy.ts';
import { describeStep, type Dependency, type Fault, type Step } from './nemesisSchedule.ts';

/** What the schedule acts on: the fleet, the file's broker, and each process's links. */
export interface Targets {
  fleet: TestFleet;
  kafka: OwnKafka;
  link(name: ProcessName, dependency: Dependency): LinkProxy;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, Math.max(0, ms)));

/** The fault's kind of process (or the broker): one fault on it at a time. */
const ownerOf = (f: Fault) => (f.kind === 'broker' ? 'broker' : f.target.replace(/\d+$/, ''));

async function apply(t: Targets, f: Fault): Promise<void> {
  switch (f.kind) {
    case 'kill':
      return t.fleet.kill(f.target);
    case 'pause':
      return t.fleet.pause(f.target);
    case 'broker':
      return t.kafka.kill();
    case 'cut':
      return t.link(f.target, f.dependency).set({ kind: 'cut' });
    case 'delay':
      return t.link(f.target, f.dependency).set({ kind: 'delay', ms: f.ms });
    default:
      f satisfies never;
  }
}

async function lift(t: Targets, f: Fault): Promise<void> {
  switch (f.kind) {
    case 'kill':
      return t.fleet.restart(f.target);
    case 'pause':
      return t.fleet.resume(f.target);
    case 'broker':
      return t.kafka.up();
    case 'cut':
    case 'delay':
      return t.link(f.target, f.dependency).set({ kind: 'pass' });
    default:
      f satisfies never;
  }
}

/**
 * Runs the steps at their times from now: each fault is applied, held, and lifted (a killed process
 * started again, a paused one continued, a link passing again). A step on a kind whose fault before
 * is still being lifted (a restart waiting for the process to be ready) waits for it, so the order of
 * the faults is the schedule's even when the machine is slow. Resolves once every fault is lifted;
 * `log` gets a line per step with when it really ran.
 */
export async function runSchedule(t: Targets, steps: readonly Step[], log: string[]): Promise<void> {
  const t0 = Date.now();
  const last = new Map<string, Promise<void>>();
  const all: Promise<void>[] = [];
  for (const step of steps) {
    await sleep(t0 + step.atMs - Date.now());
    const owner = ownerOf(step.fault);
    await last.get(owner);
    const done = (async () => {
      const start = Date.now() - t0;
      await apply(t, step.fault);
      await sleep(step.holdMs);
      await lift(t, step.fault);
      log.push(`${describeStep(step)}: ran +${start} ms to +${Date.now() - t0} ms`);
    })();
    // Awaited below (and by the next step on this kind); a failure must not count as unhandled meanwhile.
    done.catch(() => undefined);
    last.set(owner, done);
    all.push(done);
  }
  await Promise.all(all);
}
