/**
 * What a started fleet costs doing nothing: each process's CPU, the Postgres statements and commits,
 * Kafka requests and Redis calls per second of an idle minute (no account, no connector). A command's
 * CPU at a low rate is its own cost plus this per-second floor over the commands of that second, so
 * this is the figure behind "CPU per command" rising when fewer commands flow. Usage:
 *   bash infra/node.sh node bench/idle.ts [seconds=30] [settle=15]
 * Prints the load average at the start and the cost per idle second (bench/cost.ts); writes
 * docs/bench/idle-cost.json.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { costMeter } from './cost.ts';
import { partitionedFleet } from './fleet.ts';

const SECONDS = Number(process.argv[2] ?? 30);
const SETTLE = Number(process.argv[3] ?? 15);

const fleet = await partitionedFleet(4);
try {
  // Start-up work (migrations, topic creation, first joins) is over before the idle phase starts.
  await sleep(SETTLE * 1000);
  const meter = await costMeter(fleet);
  await meter.phase(
    'idle',
    () => sleep(SECONDS * 1000),
    () => SECONDS,
    'idle second',
  );
  console.log(`wrote ${meter.save('idle')}`);
} finally {
  await fleet.stop();
}
