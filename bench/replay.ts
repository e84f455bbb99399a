/**
 * Replay speed (how fast every read model is rebuilt from the topics): fills the topics through the
 * real pipeline with N domain events over several accounts (event store → outbox publisher → `auth.events` →
 * projector → `oan.events`), waits until the projector has written all N envelopes, stops the
 * projector and times `npm run replay` (services/projector/src/replay.ts) against the same topics
 * and database. Usage:
 *   bash infra/node.sh node bench/replay.ts [events=20000] [accounts=8] [partitions=4]
 * REPLAY_RUNS=k replays the same records k times; REPLAY_AGAINST=<another checkout, with its own
 * node_modules> makes every second run that checkout's replay (an A/B on one fill and one raw limit);
 * OAN_REPLAY_NODE_ARGS gives node flags (a `--cpu-prof`) to the replay command alone;
 * REPLAY_AGAINST_NODE_ARGS gives every second run other node flags instead (with REPLAY_AGAINST
 * unset, this checkout against itself: an A/B of the flags alone).
 * Prints records/s as replay reports it (domain and OAN records both count) and domain events/s
 * over the command's wall-clock time, the raw limit (a bare kafkajs group reading the same topics
 * in the same run; the median of REPLAY_RAW_RUNS=3 consumes, each by a fresh group; the same each in
 * a process of its own, as cold as the replay starts; and those with kafkajs's own record decoder,
 * bench/rawConsumeProcess.ts), the raw limit of the writes (bench/replayWrites.ts: the records read
 * into memory first, then only the projector's stage functions timed; it rebuilds the read models
 * once more), and the CPU per domain event of the fill (the fleet) and of the replay (the command
 * and the servers) from bench/cost.ts; writes docs/bench/replay.svg and docs/bench/replay-cost.json.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { FLEET_NODE_FLAGS } from '@oan/config';
import { openDatabase } from '@oan/db';
import { EventStore } from '@oan/eventstore';
import { joinAccount, REPO_ROOT, waitFor } from '@oan/testing';
import { loadProjectorConfig, topicNames } from '@oan/projector';
import { barChart } from './chart.ts';
import { costMeter, loadAverage } from './cost.ts';
import { rawKafkaConsume } from './raw.ts';
import { benchNotice, partitionedFleet } from './fleet.ts';
import { median } from './stats.ts';

const N = Number(process.argv[2] ?? 20_000);
/** Raw consumes of the same topics; their median is the raw limit the replay is compared with. */
const RAW_RUNS = Number(process.env.REPLAY_RAW_RUNS ?? 3);
const ACCOUNTS = Number(process.argv[3] ?? 8);
const PARTITIONS = Number(process.argv[4] ?? 4);
const PER_TX = 100;

/** A bench script run in its own process, which prints the rate it measured as its last line. */
async function rateOf(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, [...FLEET_NODE_FLAGS, script, ...args], {
    cwd: REPO_ROOT,
    env,
    maxBuffer: 16 * 1024 * 1024,
  });
  return Number(stdout.trim().split('\n').at(-1));
}

/** One `npm run replay` in `cwd` (this checkout, or another to compare with) with `env`. */
async function replayOnce(cwd: string, env: NodeJS.ProcessEnv) {
  const r0 = performance.now();
  const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'replay'], {
    cwd,
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  const wall = (performance.now() - r0) / 1000;
  const reported = /replayed (\d+) records in ([\d.]+) s \((\d+) records\/s\)/.exec(stdout);
  if (!reported) throw new Error(`unexpected replay output: ${stdout.slice(-500)}`);
  const stopping = /leaving the consumer groups took ([\d.]+) s more/.exec(stdout)?.[1];
  return {
    records: Number(reported[1]),
    seconds: Number(reported[2]),
    rate: Number(reported[3]),
    stopping,
    wall,
  };
}

const fleet = await partitionedFleet(PARTITIONS);
const pool = new pg.Pool({ connectionString: fleet.env.DATABASE_URL!, max: 2 });
try {
  const accounts = await Promise.all(
    Array.from({ length: ACCOUNTS }, (_, i) =>
      joinAccount(fleet.url, fleet.mailbox, `replay-${i}-${fleet.id}@example.com`),
    ),
  );
  // The replay command is this process's child: its CPU is counted when it has ended.
  const meter = await costMeter({ env: fleet.env, running: fleet.running, children: 'npm run replay' });
  const envelopes = async () =>
    Number((await pool.query<{ n: string }>('select count(*) n from read.oan_event')).rows[0]!.n);
  const before = await envelopes();

  const store = new EventStore('auth');
  const orm = await openDatabase({ url: fleet.env.DATABASE_URL!, schema: 'auth' });
  let filled = 0;
  await meter.phase(
    'fill',
    async () => {
      const t0 = performance.now();
      for (let i = 0; i < N; i += PER_TX) {
        const acc = accounts[(i / PER_TX) % ACCOUNTS]!;
        const events = Array.from({ length: Math.min(PER_TX, N - i) }, (_, j) =>
          benchNotice(acc.userId, `0.0.${i + j}`),
        );
        await orm.em
          .fork()
          .transactional((em) =>
            store.append(em, [{ streamId: `bench-${randomUUID()}`, expectedVersion: 'no_stream', events }]),
          );
      }
      await orm.close();
      await waitFor(async () => (await envelopes()) >= before + N, {
        timeoutMs: 600_000,
        intervalMs: 500,
        what: 'the projector to write every envelope',
      });
      filled = (performance.now() - t0) / 1000;
    },
    () => N,
    'domain event appended (to its envelope)',
  );

  // A graceful stop leaves the consumer groups at once (a kill -9 would make replay wait out the session).
  const live = fleet.running.get('projector')!;
  live.child.kill('SIGTERM');
  await live.exited;
  fleet.running.delete('projector');
  const projector = fleet.plan.processes.find((p) => p.name === 'projector')!;
  // The projector's settings, and node flags for the replay command: OAN_REPLAY_NODE_ARGS for it alone
  // (a profile without the fleet's), else OAN_NODE_ARGS as the fleet has them.
  const nodeArgs = process.env.OAN_REPLAY_NODE_ARGS ?? process.env.OAN_NODE_ARGS;
  const envWith = (args: string | undefined) => ({
    ...process.env,
    ...projector.env,
    ...(args ? { NODE_OPTIONS: args } : {}),
  });
  const replayEnv = envWith(nodeArgs);
  const first = await meter.phase(
    'replay',
    () => replayOnce(REPO_ROOT, replayEnv),
    () => N,
    'domain event replayed (with its envelope)',
  );
  const { records, seconds, rate, stopping, wall } = first.result;
  // REPLAY_RUNS=k replays the same topics k times in all; REPLAY_AGAINST=<checkout> alternates the
  // runs with that checkout's replay command (an A/B on the same records, beside the same raw limit).
  const runs = Number(process.env.REPLAY_RUNS ?? 1);
  const againstArgs = process.env.REPLAY_AGAINST_NODE_ARGS;
  const against = process.env.REPLAY_AGAINST ?? (againstArgs !== undefined ? REPO_ROOT : undefined);
  const extra: { name: string; rate: number; seconds: number }[] = [];
  for (let i = 1; i < runs; i++) {
    const other = against !== undefined && i % 2 === 1;
    const tree = other ? against : REPO_ROOT;
    const label = [
      tree === REPO_ROOT ? 'this checkout' : tree,
      ...(other && againstArgs !== undefined ? [`node ${againstArgs || '(no flags)'}`] : []),
    ];
    const name = `run ${i + 1}${against !== undefined ? ` (${label.join(', ')})` : ''}`;
    // Each run metered as the first: its CPU per event, beside the other tree's.
    const { result: r } = await meter.phase(
      `replay ${name}`,
      () => replayOnce(tree, other && againstArgs !== undefined ? envWith(againstArgs) : replayEnv),
      () => N,
      `domain event replayed (${name})`,
    );
    extra.push({ name, rate: r.rate, seconds: r.seconds });
  }
  const after = await envelopes();
  if (after !== before + N) throw new Error(`replay rebuilt ${after} envelopes, expected ${before + N}`);
  // The raw limit in the same run: the same topics read by a bare consumer group with the same client.
  const t = topicNames(loadProjectorConfig(projector.env));
  // A consume of 100,000 records lasts under a second, so one run moves with the machine's moment
  // (82,000–190,000 records/s in one day): the median of RAW_RUNS (3), each a fresh group.
  const rawRuns: number[] = [];
  for (let i = 0; i < RAW_RUNS; i++)
    rawRuns.push(await rawKafkaConsume(fleet.env.KAFKA_BROKERS!.split(','), [...t.domain, t.oan], records));
  const raw = median(rawRuns);
  // The same consumes each in a process of its own, started as cold as `npm run replay` (the runs
  // above share this process, so all but the first are warm): through `createKafka` as the replay
  // reads, and with kafkajs as it ships (its record decoder, not libs/kafka's, ADR 0053), the raw
  // figure of the runs before that decoder.
  const inOwnProcess = async (client: 'stock' | 'ours') => {
    const runs: number[] = [];
    for (let i = 0; i < RAW_RUNS; i++)
      runs.push(
        await rateOf(
          'bench/rawConsumeProcess.ts',
          [client, fleet.env.KAFKA_BROKERS!, [...t.domain, t.oan].join(','), String(records)],
          process.env,
        ),
      );
    return runs;
  };
  const coldRuns = await inOwnProcess('ours');
  const cold = median(coldRuns);
  const stockRuns = await inOwnProcess('stock');
  const stock = median(stockRuns);
  // The raw limit of the writes: the same records read into memory first, then only the projector's
  // stage functions timed (bench/replayWrites.ts, its own process, the projector's settings).
  const writesAlone = await rateOf('bench/replayWrites.ts', [], envWith(undefined));

  console.log(
    `${N} domain events over ${ACCOUNTS} accounts (${PARTITIONS} partitions per topic) filled through the live pipeline in ${filled.toFixed(1)} s`,
  );
  console.log(
    `npm run replay: ${records} records (domain + OAN topics) in ${seconds.toFixed(1)} s → ${rate} records/s ` +
      `(to the last record applied; leaving the groups took ${stopping ?? '?'} s more)`,
  );
  console.log(
    `wall clock of the command (start-up and truncate included): ${wall.toFixed(1)} s → ` +
      `${Math.round(N / wall)} domain events/s (each also rebuilding its envelope)`,
  );
  console.log(
    `raw kafkajs consume of the same topics (a fresh group each, records dropped): ${Math.round(raw)} records/s, ` +
      `the median of ${rawRuns.map(Math.round).join(', ')}; ` +
      `replay / raw ${((100 * rate) / raw).toFixed(0)} %`,
  );
  console.log(
    `raw consume through createKafka, each in its own process (as cold as the replay): ${cold} records/s, ` +
      `the median of ${coldRuns.join(', ')}; replay / that raw ${((100 * rate) / cold).toFixed(0)} %`,
  );
  console.log(
    `raw consume with kafkajs's own record decoder (its own process, a fresh group each): ${stock} records/s, ` +
      `the median of ${stockRuns.join(', ')}; replay / that raw ${((100 * rate) / stock).toFixed(0)} %`,
  );
  console.log(
    `the writes alone (the same records read into memory first, then applied by the projector's stages): ` +
      `${writesAlone} records/s; replay / writes alone ${((100 * rate) / writesAlone).toFixed(0)} %`,
  );
  for (const r of extra) {
    console.log(
      `replay ${r.name}: ${r.rate} records/s in ${r.seconds.toFixed(1)} s; ` +
        `replay / raw ${((100 * r.rate) / raw).toFixed(0)} %, / raw in its own process ` +
        `${((100 * r.rate) / cold).toFixed(0)} %, / kafkajs's own ${((100 * r.rate) / stock).toFixed(0)} %`,
    );
  }
  const file = await barChart(
    'replay',
    [
      { label: 'live pipeline fill, events/s', value: N / filled },
      { label: 'replay, records/s (as reported)', value: rate },
      { label: 'replay, domain events/s (wall clock)', value: N / wall },
      { label: 'raw kafkajs consume, records/s', value: raw },
      { label: 'raw, each in its own process, records/s', value: cold },
      { label: "raw, kafkajs's own decoder, records/s", value: stock },
      { label: 'the writes alone, records/s', value: writesAlone },
    ],
    { title: `Replay of ${N} events (${records} records)`, unit: 'per second' },
  );
  console.log(`chart: ${file}`);
  console.log(`costs: ${meter.save('replay')}`);
  console.log(`load average after the run: ${loadAverage()}`);
} finally {
  await pool.end();
  await fleet.stop();
}
