import { describe, expect, it } from 'vitest';
import { PROCESS_KINDS, replicaName } from '@oan/testing';
import { describeStep, LINKS, mulberry32, nemesisSchedule, REPLICAS, type Step } from './nemesisSchedule.ts';

const fleetNames = PROCESS_KINDS.flatMap((k) => [1, 2].map((i) => replicaName(k, i)));
const kindOf = (target: string) => PROCESS_KINDS.find((k) => target.startsWith(k))!;
const whose = (s: Step) => (s.fault.kind === 'broker' ? 'broker' : kindOf(s.fault.target));
const seeds = Array.from({ length: 200 }, (_, i) => i * 7919 + 1);

describe('the nemesis schedule', () => {
  it('is a pure function of the seed and the duration', () => {
    for (const seed of seeds.slice(0, 20)) {
      expect(nemesisSchedule(seed, 60)).toEqual(nemesisSchedule(seed, 60));
      expect(nemesisSchedule(seed, 60)).not.toEqual(nemesisSchedule(seed + 1, 60));
    }
  });

  // A seed printed by an earlier run replays the same faults: the generator and the schedule are pinned.
  it('replays a recorded seed as it ran', () => {
    expect(mulberry32(1)()).toBeCloseTo(0.6270739405881613, 15);
    expect(nemesisSchedule(42, 20).map(describeStep)).toEqual([
      '+2.2 s agents2 paused for 3.2 s',
      '+4.6 s projector2 killed -9 for 1.4 s',
      '+8.0 s gofers killed -9 for 1.7 s',
    ]);
  });

  it('names processes of a fleet of two of every kind, and links they have', () => {
    expect(REPLICAS).toBe(2);
    for (const seed of seeds)
      for (const { fault } of nemesisSchedule(seed, 120)) {
        if (fault.kind === 'broker') continue;
        expect(fleetNames).toContain(fault.target);
        if (fault.kind === 'cut' || fault.kind === 'delay')
          expect(LINKS[kindOf(fault.target)]).toContain(fault.dependency);
      }
  });

  it('lifts every fault before the end, never faults one kind twice at once, and runs at most two', () => {
    for (const seed of seeds) {
      const steps = nemesisSchedule(seed, 45);
      expect(steps.length).toBeGreaterThan(3);
      for (const [i, s] of steps.entries()) {
        expect(s.atMs + s.holdMs).toBeLessThanOrEqual(45_000);
        const during = steps.filter((o, j) => j !== i && o.atMs <= s.atMs && o.atMs + o.holdMs > s.atMs);
        expect(during.length).toBeLessThan(2);
        expect(during.map(whose)).not.toContain(whose(s));
      }
    }
  });

  it('faults every kind of process in a ten-minute run', () => {
    for (const seed of seeds.slice(0, 20)) {
      const kinds = nemesisSchedule(seed, 600)
        .map(whose)
        .filter((k) => k !== 'broker');
      expect(new Set(kinds).size).toBe(PROCESS_KINDS.length);
    }
  });

  it('uses every fault over enough seeds: kill, pause, broker, cut and delay of each dependency', () => {
    const seen = new Set(
      seeds.flatMap((seed) =>
        nemesisSchedule(seed, 60).map(({ fault }) =>
          fault.kind === 'cut' || fault.kind === 'delay' ? `${fault.kind} ${fault.dependency}` : fault.kind,
        ),
      ),
    );
    expect([...seen].sort()).toEqual([
      'broker',
      'cut kafka',
      'cut postgres',
      'cut redis',
      'delay kafka',
      'delay postgres',
      'delay redis',
      'kill',
      'pause',
    ]);
  });
});
