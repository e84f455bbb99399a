/**
 * Start-up of the whole fleet with each way of running our TypeScript (ADR 0001): Node 24's
 * own type stripping with its compile cache (the default, ADR 0047), the same without the cache
 * (NODE_DISABLE_COMPILE_CACHE=1), tsx's loader, and each service bundled into one file with the
 * cache (what the e2e fleets run, ADR 0048), in the same run, alternating. Usage:
 *   bash infra/node.sh node bench/startup.ts [rounds=3]
 * For each round and loader it starts a TestFleet (every process of the fleet, each its own Node
 * process) and prints the wall clock until every process answers ready and the CPU time the fleet's
 * processes spent getting there (utime + stime from /proc, start-up only: nothing is served yet);
 * then the medians, and the load average.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { bundleServices, REPO_ROOT, TestFleet } from '@oan/testing';
import { cpuSecondsOf, loadAverage } from './cost.ts';
import { median } from './stats.ts';

const ROUNDS = Number(process.argv[2] ?? 3);
// Each variant's loader and whether Node's compile cache is off; the first round of `native`
// (the cache's first fill when .data has none) counts like any other.
const VARIANTS = {
  native: { loader: 'native', noCache: false, bundled: false },
  'no-cache': { loader: 'native', noCache: true, bundled: false },
  tsx: { loader: 'tsx', noCache: false, bundled: false },
  bundle: { loader: 'native', noCache: false, bundled: true },
} as const;
const LOADERS = Object.keys(VARIANTS) as (keyof typeof VARIANTS)[];

const results: Record<string, { wall: number[]; cpu: number[]; processes: number }> = {};
console.log(`load average before: ${loadAverage()}`);
const bundleDir = join(REPO_ROOT, '.tmp', 'bundles', `startup-${process.pid}`);
const b0 = performance.now();
await bundleServices(bundleDir);
console.log(`services bundled in ${((performance.now() - b0) / 1000).toFixed(1)} s`);
for (let round = 1; round <= ROUNDS; round++) {
  for (const loader of LOADERS) {
    process.env.OAN_TS_LOADER = VARIANTS[loader].loader;
    if (VARIANTS[loader].noCache) process.env.NODE_DISABLE_COMPILE_CACHE = '1';
    else delete process.env.NODE_DISABLE_COMPILE_CACHE;
    if (VARIANTS[loader].bundled) process.env.OAN_FLEET_BUNDLES = bundleDir;
    else delete process.env.OAN_FLEET_BUNDLES;
    const t0 = performance.now();
    const fleet = await TestFleet.start({ env: { LOG_LEVEL: 'warn' } });
    const wall = (performance.now() - t0) / 1000;
    let cpu = 0;
    for (const p of fleet.running.values()) cpu += cpuSecondsOf(p.child.pid!);
    const processes = fleet.running.size;
    await fleet.stop();
    const r = (results[loader] ??= { wall: [], cpu: [], processes });
    r.wall.push(wall);
    r.cpu.push(cpu);
    console.log(
      `round ${round} ${loader.padEnd(8)}: ${processes} processes ready in ${wall.toFixed(1)} s, ` +
        `${cpu.toFixed(1)} CPU-s (${(cpu / processes).toFixed(2)} per process)`,
    );
  }
}
for (const loader of LOADERS) {
  const r = results[loader]!;
  console.log(
    `${loader.padEnd(8)} median: ready in ${median(r.wall).toFixed(1)} s, ${median(r.cpu).toFixed(1)} CPU-s ` +
      `(${(median(r.cpu) / r.processes).toFixed(2)} per process)`,
  );
}
console.log(`load average after: ${loadAverage()}`);
rmSync(bundleDir, { recursive: true, force: true });
