/**
 * The pipeline with one process of each kind against the same pipeline with replicas, in one run on
 * one machine: (a) one of each, (b) two projectors, (c) two of each command service and two
 * projectors. Each configuration gets its own fleet on topics of `partitions` partitions, so replicas
 * of a consumer group split them. Per configuration: `POST /gofers` through the edge until every
 * `gofer_message` reached its owner's socket (commands/s, latency from the request to the envelope),
 * events appended straight to the auth event store until every `system_notice` is in
 * `read.oan_event` (events/s), the fleet's CPU per command and per event (bench/cost.ts), and the raw
 * kafkajs produce → consume rate on the same broker (bench/raw.ts). Usage:
 *   bash infra/node.sh node bench/replicas.ts [accounts=24] [commands=1500] [events=4000]
 *     [concurrency=24] [appenders=32] [partitions=4] [configs=one,projectors,services]
 * Writes docs/bench/replicas.json and docs/bench/replicas.svg.
 */
import type { ReplicaCounts, TestFleet } from '@oan/testing';
import { saveChart, type Row } from './chart.ts';
import { costMeter, cpuSecondsOf, loadAverage as load } from './cost.ts';
import { partitionedFleet } from './fleet.ts';
import { appendLoad, commandLoad, joinAccounts } from './pipelineLoad.ts';
import { rawKafkaHop } from './raw.ts';
import { fmt } from './stats.ts';

const ACCOUNTS = Number(process.argv[2] ?? 24);
const COMMANDS = Number(process.argv[3] ?? 1500);
const EVENTS = Number(process.argv[4] ?? 4000);
const CONCURRENCY = Number(process.argv[5] ?? 24);
const APPENDERS = Number(process.argv[6] ?? 32);
const PARTITIONS = Number(process.argv[7] ?? 4);
const CHOSEN = (process.argv[8] ?? 'one,projectors,services').split(',');

const CONFIGS: Record<string, { label: string; replicas: ReplicaCounts }> = {
  one: { label: 'one of each', replicas: {} },
  projectors: { label: 'two projectors', replicas: { projector: 2 } },
  services: {
    label: 'two of each command service and projector',
    replicas: { auth: 2, gofers: 2, matching: 2, conversations: 2, projector: 2 },
  },
};
for (const c of CHOSEN)
  if (!CONFIGS[c]) throw new Error(`unknown configuration ${c}: one, projectors, services`);

interface Result extends Row {
  config: string;
  loadBefore: string;
  commandsPerSecond: number;
  commandP50Ms: number;
  commandP99Ms: number;
  eventsPerSecond: number;
  /** The whole machine's share as bench/cost.ts counts it: the fleet's processes and the servers. */
  cpuMsPerCommand: number;
  nodeCpuMsPerCommand: number;
  cpuMsPerEvent: number;
  nodeCpuMsPerEvent: number;
  rawKafkaPerSecond: number;
}

async function measure(name: string): Promise<Result> {
  const { label, replicas } = CONFIGS[name]!;
  const loadBefore = load();
  console.log(`\n== ${label} (load average ${loadBefore})`);
  const fleet = await partitionedFleet(PARTITIONS, {}, { replicas });
  try {
    const accounts = await joinAccounts(fleet, ACCOUNTS);
    const commands = await commandLoad(fleet, accounts);
    // One command per account first, outside the clock: every consumer group has settled on its
    // partitions (a second replica joining rebalances them) and the code paths are warm.
    await commands.run(accounts.length, CONCURRENCY);

    const meter = await costMeter(fleet);
    const cpu0 = cpuOfReplicas(fleet);
    const { result: cmd, cost: perCommand } = await meter.phase(
      'command',
      () => commands.run(COMMANDS, CONCURRENCY),
      (r) => r.count,
      'accepted POST /gofers (delivered)',
    );
    const { result: ev, cost: perEvent } = await meter.phase(
      'event',
      () => appendLoad(fleet, accounts, EVENTS, APPENDERS),
      (r) => r.count,
      'appended event (in read.oan_event)',
    );
    const cpu1 = cpuOfReplicas(fleet);
    commands.close();

    const brokers = fleet.env.KAFKA_BROKERS!.split(',');
    const raw = await rawKafkaHop(brokers, fleet.env.TOPIC_PREFIX!, PARTITIONS);
    const rawRate = await raw.throughput(50_000, 100, 600);
    await raw.close();

    const result: Result = {
      config: label,
      loadBefore,
      commandsPerSecond: cmd.perSecond,
      commandP50Ms: cmd.latency.p50,
      commandP99Ms: cmd.latency.p99,
      eventsPerSecond: ev.perSecond,
      cpuMsPerCommand: perCommand.perUnit.cpuMs,
      nodeCpuMsPerCommand: perCommand.perUnit.fleetCpuMs,
      cpuMsPerEvent: perEvent.perUnit.cpuMs,
      nodeCpuMsPerEvent: perEvent.perUnit.fleetCpuMs,
      rawKafkaPerSecond: rawRate,
    };
    print(result, cmd.count, ev.count);
    console.log(
      `  CPU seconds per process over both phases (replicas apart): ${[...cpu1]
        .map(([p, s]) => `${p} ${(s - (cpu0.get(p) ?? 0)).toFixed(2)}`)
        .join(', ')}`,
    );
    return result;
  } finally {
    await fleet.stop();
  }
}

/** CPU seconds of each fleet process by its own name, so the replicas of a kind show apart. */
function cpuOfReplicas(fleet: TestFleet): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, p] of fleet.running) if (p.child.pid) out.set(name, cpuSecondsOf(p.child.pid));
  return out;
}

const pct = (x: number, of: number) => `${((100 * x) / of).toFixed(2)} %`;

function print(r: Result, commands: number, events: number): void {
  console.log(
    `  commands end to end:   ${r.commandsPerSecond.toFixed(0)}/s (${commands} accepted and delivered, ` +
      `${CONCURRENCY} in flight); request → envelope p50 ${fmt(r.commandP50Ms)}, p99 ${fmt(r.commandP99Ms)}`,
  );
  console.log(
    `  events → event table:  ${r.eventsPerSecond.toFixed(0)}/s (${events} appended, ${APPENDERS} in flight)`,
  );
  console.log(
    `  CPU per command:       ${r.cpuMsPerCommand} ms (Node processes ${r.nodeCpuMsPerCommand.toFixed(2)} ms)`,
  );
  console.log(
    `  CPU per event:         ${r.cpuMsPerEvent} ms (Node processes ${r.nodeCpuMsPerEvent.toFixed(2)} ms)`,
  );
  console.log(
    `  raw kafkajs (50,000 × 600 B, batches of 100, acks=-1, ${PARTITIONS} partitions): ` +
      `${r.rawKafkaPerSecond.toFixed(0)} msgs/s; commands ${pct(r.commandsPerSecond, r.rawKafkaPerSecond)} ` +
      `of it, events ${pct(r.eventsPerSecond, r.rawKafkaPerSecond)}`,
  );
}

console.log(
  `${ACCOUNTS} accounts, ${COMMANDS} POST /gofers, ${EVENTS} appended events, ${PARTITIONS} partitions per topic`,
);
const rows: Result[] = [];
for (const name of CHOSEN) rows.push(await measure(name));

console.log(`\nsummary (load average after the run ${load()})`);
console.log(
  '| configuration | commands/s | p50 / p99 | events/s | CPU ms per command / event | raw kafka msgs/s |',
);
for (const r of rows) {
  console.log(
    `| ${r.config} | ${r.commandsPerSecond.toFixed(0)} | ${fmt(r.commandP50Ms)} / ${fmt(r.commandP99Ms)} | ` +
      `${r.eventsPerSecond.toFixed(0)} | ${r.cpuMsPerCommand} / ${r.cpuMsPerEvent} | ${r.rawKafkaPerSecond.toFixed(0)} |`,
  );
}
const file = await saveChart('replicas', rows, {
  title: `Throughput by replicas (${PARTITIONS} partitions per topic)`,
  transform: [{ fold: ['commandsPerSecond', 'eventsPerSecond'], as: ['figure', 'value'] }],
  mark: 'bar',
  encoding: {
    y: { field: 'config', type: 'nominal', title: null, sort: null, axis: { labelLimit: 400 } },
    yOffset: { field: 'figure' },
    x: { field: 'value', type: 'quantitative', title: 'per second' },
    color: { field: 'figure', type: 'nominal', title: null },
  },
});
console.log(`chart: ${file}`);
