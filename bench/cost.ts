/**
 * The cost report: what a phase of a benchmark cost, counted rather than estimated, so it
 * can be divided by the commands or events the phase moved. Before and after the phase it reads:
 * - Postgres: the transaction ids handed out (the write transactions: each one's commit flushes the
 *   WAL; counted at once, for the whole server), pg_stat_database of the fleet's database (commits,
 *   rollbacks: each backend flushes these lazily, an idle one after about 10 s, so a short phase's
 *   count lags it) and, when the server preloads pg_stat_statements, every statement's calls
 *   (statements = round trips: the services send one statement per round trip);
 * - Kafka: every fleet process's `oan_kafka_requests_total` (its kafkajs clients' requests by API);
 * - Redis: INFO commandstats (calls per command, the whole server: run benchmarks alone);
 * - CPU: each fleet process's user + system time from /proc, and the server processes' (postgres,
 *   the Kafka JVM, redis-server) by name;
 * - events: the rows of every event store (`<schema>.events`) and of `read.oan_event` in the fleet's
 *   database, so a phase's cost is also given per appended event and per envelope.
 * `costMeter` wraps it for a script: the load average, whether statements can be counted, a report
 * per phase, and the reports written to docs/bench/<name>-cost.json.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { brokersFromEnv } from '@oan/kafka';
import { REPO_ROOT, type RunningProcess } from '@oan/testing';
import { rawKafkaHop } from './raw.ts';
import { paced } from './stats.ts';

/** What a snapshot reads: the fleet's database and Redis and its processes (a TestFleet is one). */
export interface CostScope {
  env: Record<string, string | undefined>;
  running: ReadonlyMap<string, Pick<RunningProcess, 'child' | 'spec'>>;
  /** Counts this process's own CPU under this name, when the measured work runs in it. */
  self?: string;
  /** Counts under this name the CPU of this process's children that ended and were waited for. */
  children?: string;
}

export interface CostSnapshot {
  at: number;
  db: { commits: number; rollbacks: number; writeTransactions: number };
  statements: Map<string, number> | null;
  kafka: Map<string, number>;
  redis: Map<string, number>;
  cpu: Map<string, number>;
  /** Rows of every event store and of read.oan_event (null where the database has none). */
  events: { appended: number | null; envelopes: number | null };
}

/** The machine's load average over 1, 5 and 15 minutes. */
export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** The load average when the script started (when it first imported this module, before any fleet). */
export const loadAtStart = loadAverage();

export const NO_STATEMENT_STATS =
  'statement counts unknown: pg_stat_statements is not preloaded by this server (docs/benchmarks.md says how)';

/** Marks the snapshot's own statements, which are not the fleet's work. */
const OWN = '/* bench cost snapshot */';

const TICKS = 100; // USER_HZ

/**
 * utime + stime of a live process in seconds (fields 14 and 15 of /proc/<pid>/stat); throws once it
 * ended. `reaped` adds cutime + cstime (16 and 17): its children that ended and were waited for.
 */
export function cpuSecondsOf(pid: number | string, { reaped = false } = {}): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) / TICKS;
}

/** Fields 16 and 17 of /proc/self/stat: the CPU of the children this process waited for. */
function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS;
}

export function cpuByKind(scope: CostScope): Map<string, number> {
  const out = new Map<string, number>();
  const add = (k: string, v: number) => out.set(k, (out.get(k) ?? 0) + v);
  if (scope.self) {
    const { user, system } = process.cpuUsage();
    add(scope.self, (user + system) / 1e6);
  }
  if (scope.children) add(scope.children, childrenCpuSeconds());
  const fleetPids = new Map<number, string>();
  for (const [name, p] of scope.running)
    if (p.child.pid) fleetPids.set(p.child.pid, name.replace(/\d+$/, ''));
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const seconds = cpuSecondsOf(entry);
      const fleetName = fleetPids.get(Number(entry));
      if (fleetName) {
        add(fleetName, seconds);
        continue;
      }
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      // A backend that closed during the phase (a pool that ended, the replay command's) took its CPU
      // away from the live processes; the postmaster reaped it, so it is counted there.
      // The postmaster's argv[0] is its path (`…/bin/postgres`, then NUL-separated arguments);
      // a backend's is `postgres: …`.
      const argv0 = cmd.split('\0', 1)[0]!;
      if (argv0.startsWith('postgres') || argv0.endsWith('/postgres'))
        add('postgres', cpuSecondsOf(entry, { reaped: true }));
      else if (cmd.includes('kafka.Kafka') || cmd.includes('kafka/target')) add('kafka', seconds);
      else if (cmd.startsWith('redis-server')) add('redis', seconds);
      // A proxy a bench runs in front of the fleet (bench/events-page.ts).
      else if (cmd.startsWith('nginx:')) add('nginx', seconds);
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

async function kafkaRequests(scope: CostScope): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [name, p] of scope.running) {
    const res = await fetch(`http://127.0.0.1:${p.spec.metricsPort ?? p.spec.port}/metrics`).catch(
      () => undefined,
    );
    if (!res?.ok) continue;
    for (const line of (await res.text()).split('\n')) {
      const m = /^oan_kafka_requests_total\{role="(\w+)",api="(\w+)"\} (\d+)/.exec(line);
      if (m) {
        const key = `${name.replace(/\d+$/, '')} ${m[1]} ${m[2]}`;
        out.set(key, (out.get(key) ?? 0) + Number(m[3]));
      }
    }
  }
  return out;
}

async function redisCalls(url: string): Promise<Map<string, number>> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await r.connect();
    const info = await r.info('commandstats');
    const out = new Map<string, number>();
    for (const m of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) out.set(m[1]!, Number(m[2]));
    return out;
  } finally {
    r.disconnect();
  }
}

/** Rows of every event store (`<schema>.events`) and of read.oan_event in the database. */
async function eventRows(c: pg.Client): Promise<CostSnapshot['events']> {
  const tables = await c.query<{ schema: string; name: string }>(
    `${OWN} select table_schema as schema, table_name as name from information_schema.tables
      where table_type = 'BASE TABLE' and (table_name = 'events' or (table_schema, table_name) = ('read', 'oan_event'))`,
  );
  const count = async (t: { schema: string; name: string }) =>
    Number(
      (await c.query<{ n: string }>(`${OWN} select count(*)::text as n from "${t.schema}"."${t.name}"`))
        .rows[0]!.n,
    );
  const stores = tables.rows.filter((t) => t.name === 'events');
  const read = tables.rows.find((t) => t.name === 'oan_event');
  let appended = 0;
  for (const t of stores) appended += await count(t);
  return { appended: stores.length ? appended : null, envelopes: read ? await count(read) : null };
}

export async function costSnapshot(scope: CostScope): Promise<CostSnapshot> {
  const url = scope.env.DATABASE_URL!;
  const db = new URL(url).pathname.slice(1);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const [kafka, redis] = await Promise.all([
      kafkaRequests(scope),
      redisCalls(scope.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0'),
    ]);
    const events = await eventRows(c);
    // The next transaction id, read without taking one: it moves once per write transaction, at once.
    const d = await c.query<{ commits: string; rollbacks: string; xid: string }>(
      `${OWN} select xact_commit::text as commits, xact_rollback::text as rollbacks,
        pg_snapshot_xmax(pg_current_snapshot())::text as xid from pg_stat_database where datname = $1`,
      [db],
    );
    let statements: Map<string, number> | null = null;
    try {
      const s = await c.query<{ query: string; calls: string }>(
        `${OWN} select query, calls::text as calls from pg_stat_statements s join pg_database d on d.oid = s.dbid
          where d.datname = $1`,
        [db],
      );
      statements = new Map();
      for (const r of s.rows) statements.set(r.query, (statements.get(r.query) ?? 0) + Number(r.calls));
    } catch {
      // pg_stat_statements is not preloaded (or not created in this database): counts stay unknown.
    }
    return {
      at: performance.now(),
      db: {
        commits: Number(d.rows[0]?.commits ?? 0),
        rollbacks: Number(d.rows[0]?.rollbacks ?? 0),
        writeTransactions: Number(d.rows[0]?.xid ?? 0),
      },
      statements,
      kafka,
      redis,
      cpu: cpuByKind(scope),
      events,
    };
  } finally {
    await c.end();
  }
}

/** Makes pg_stat_statements readable from the fleet's database when the server preloads it. */
export async function enableStatementStats(scope: Pick<CostScope, 'env'>): Promise<boolean> {
  const c = new pg.Client({ connectionString: scope.env.DATABASE_URL! });
  await c.connect();
  try {
    const r = await c.query<{ libs: string }>(`select current_setting('shared_preload_libraries') as libs`);
    if (!r.rows[0]?.libs.includes('pg_stat_statements')) return false;
    await c.query('create extension if not exists pg_stat_statements');
    return true;
  } catch {
    return false;
  } finally {
    await c.end();
  }
}

const diff = (a: Map<string, number>, b: Map<string, number>) => {
  const out = new Map<string, number>();
  for (const [k, v] of b) {
    const d = v - (a.get(k) ?? 0);
    if (d > 0) out.set(k, d);
  }
  return out;
};

const sum = (m: Map<string, number>, pick: (k: string) => boolean = () => true) =>
  [...m].filter(([k]) => pick(k)).reduce((s, [, v]) => s + v, 0);

/** The database, broker and Redis are shared with anything else on the machine; the rest is the fleet's own. */
const SERVERS = new Set(['postgres', 'kafka', 'redis']);

export interface CostReport {
  units: number;
  unit: string;
  seconds: number;
  /** Domain events appended to the event stores and envelopes written to read.oan_event in the phase. */
  events: { appended: number | null; envelopes: number | null };
  perUnit: {
    pgStatements: number | null;
    /** Commits as pg_stat_database counts them: lazily flushed, so a short phase's count lags it. */
    pgCommits: number;
    /** Write transactions (transaction ids handed out, the whole server): exact, at once. */
    pgWriteTransactions: number;
    kafkaRequests: number;
    kafkaProduce: number;
    kafkaFetch: number;
    kafkaOffsetCommit: number;
    redisCalls: number;
    cpuMs: number;
    /** The fleet's own processes, without the shared servers. */
    fleetCpuMs: number;
  };
  /** The phase's CPU over its appended events and its envelopes (null where none were). */
  cpuMsPerEvent: { appended: number | null; envelope: number | null };
  cpuMsPerUnit: Record<string, number>;
  kafkaPerUnit: Record<string, number>;
  redisPerUnit: Record<string, number>;
  topStatements: { calls: number; perUnit: number; query: string }[];
}

/** Prints the phase's cost per unit (a command, a request, …) and per appended event, and returns it. */
export function costReport(
  before: CostSnapshot,
  after: CostSnapshot,
  units: number,
  unit: string,
): CostReport {
  const per = (n: number) => (x: number) => Math.round((x / n) * 100) / 100;
  const r = per(units);
  const statements = before.statements && after.statements ? diff(before.statements, after.statements) : null;
  // The snapshot's own reads are not the fleet's work.
  if (statements)
    for (const k of [...statements.keys()]) if (/pg_stat_|bench cost snapshot/.test(k)) statements.delete(k);
  const kafka = diff(before.kafka, after.kafka);
  const redis = diff(before.redis, after.redis);
  const cpu = diff(before.cpu, after.cpu);
  const cpuSeconds = sum(cpu);
  const moved = (k: 'appended' | 'envelopes') => {
    const [a, b] = [before.events[k], after.events[k]];
    return a === null || b === null ? null : b - a;
  };
  const events = { appended: moved('appended'), envelopes: moved('envelopes') };
  const perEvent = (n: number | null) => (n ? per(n)(cpuSeconds * 1000) : null);
  const report: CostReport = {
    units,
    unit,
    seconds: (after.at - before.at) / 1000,
    events,
    perUnit: {
      pgStatements: statements ? r(sum(statements)) : null,
      pgCommits: r(after.db.commits - before.db.commits),
      pgWriteTransactions: r(after.db.writeTransactions - before.db.writeTransactions),
      kafkaRequests: r(sum(kafka)),
      kafkaProduce: r(sum(kafka, (k) => k.endsWith(' Produce'))),
      kafkaFetch: r(sum(kafka, (k) => k.endsWith(' Fetch'))),
      kafkaOffsetCommit: r(sum(kafka, (k) => k.endsWith(' OffsetCommit'))),
      redisCalls: r(sum(redis, (k) => k !== 'info')),
      cpuMs: r(cpuSeconds * 1000),
      fleetCpuMs: r(sum(cpu, (k) => !SERVERS.has(k)) * 1000),
    },
    cpuMsPerEvent: { appended: perEvent(events.appended), envelope: perEvent(events.envelopes) },
    cpuMsPerUnit: Object.fromEntries([...cpu].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, r(v * 1000)])),
    kafkaPerUnit: Object.fromEntries([...kafka].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, r(v)])),
    redisPerUnit: Object.fromEntries([...redis].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, r(v)])),
    topStatements: statements
      ? [...statements]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 15)
          .map(([query, calls]) => ({
            calls,
            perUnit: r(calls),
            query: query.replace(/\s+/g, ' ').slice(0, 140),
          }))
      : [],
  };
  const p = report.perUnit;
  const moves = [
    events.appended === null ? '' : `${events.appended} events appended`,
    events.envelopes === null ? '' : `${events.envelopes} envelopes`,
  ].filter(Boolean);
  console.log(
    `cost per ${unit} (${units} in ${report.seconds.toFixed(1)} s${moves.length ? `; ${moves.join(', ')}` : ''}):`,
  );
  console.log(
    `  cpu: ${p.cpuMs} ms per ${unit} (the fleet's processes ${p.fleetCpuMs} ms, the rest postgres, kafka ` +
      `and redis, which anything else on the machine shares; by process: ${Object.entries(report.cpuMsPerUnit)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')})`,
  );
  const { appended, envelope } = report.cpuMsPerEvent;
  console.log(
    `  cpu per event: ${
      appended === null && envelope === null
        ? 'no events appended or delivered'
        : [
            appended === null ? '' : `${appended} ms per appended event`,
            envelope === null ? '' : `${envelope} ms per envelope`,
          ]
            .filter(Boolean)
            .join(', ')
    }`,
  );
  console.log(
    `  postgres: ${p.pgStatements === null ? 'statements unknown (pg_stat_statements not preloaded)' : `${p.pgStatements} statements`}, ${p.pgWriteTransactions} write transactions, ${p.pgCommits} commits (counted lazily)`,
  );
  console.log(
    `  kafka: ${p.kafkaRequests} requests (produce ${p.kafkaProduce}, fetch ${p.kafkaFetch}, offset commit ${p.kafkaOffsetCommit})`,
  );
  console.log(`  redis: ${p.redisCalls} calls`);
  if (process.env.COST_DETAIL) {
    for (const [k, v] of Object.entries(report.kafkaPerUnit)) console.log(`    kafka ${k}: ${v}`);
    for (const [k, v] of Object.entries(report.redisPerUnit)) console.log(`    redis ${k}: ${v}`);
    for (const s of report.topStatements) console.log(`    ${s.perUnit} × ${s.query}`);
  }
  return report;
}

/** The broker's CPU seconds so far (the process whose command line names the Kafka broker). */
export const brokerCpuSeconds = () => cpuByKind({ env: {}, running: new Map() }).get('kafka') ?? 0;

export interface BrokerRounds {
  /** Records per round, sent alone (acks=-1) and fetched by one group. */
  round?: number;
  rate?: number;
  rounds?: number;
  partitions?: number;
  /** Stops once a round costs the broker within 15 % of the round before. */
  untilSteady?: boolean;
}

/**
 * The broker's CPU per record, round by round: records sent alone (idempotent, acks=-1) and fetched
 * by one group, as `bench/floor.ts` prices them, `round` at a time at `rate`/s.
 */
export async function brokerCpuPerRecord(
  brokers: string[],
  prefix: string,
  { round = 4000, rate = 2000, rounds = 8, partitions = 1, untilSteady = false }: BrokerRounds = {},
): Promise<number[]> {
  const hop = await rawKafkaHop(brokers, prefix, partitions);
  const value = Buffer.alloc(600, 'x');
  const perRecordMs: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const before = brokerCpuSeconds();
      await paced(round, rate, (i) => hop.sendOne(`w${r}-${i}`, value));
      await hop.caughtUp();
      perRecordMs.push(((brokerCpuSeconds() - before) * 1000) / round);
      const [prev, last] = perRecordMs.slice(-2);
      if (untilSteady && perRecordMs.length >= 2 && Math.abs(last! - prev!) <= 0.15 * prev!) break;
    }
  } finally {
    await hop.close();
  }
  return perRecordMs;
}

/**
 * Warms the broker's JIT before a script measures anything that goes through it. A broker that has
 * just started spends two to four times the CPU per request on its first ten to twenty thousand
 * requests that it spends once its request paths are compiled (`bench/broker.ts`, docs/benchmarks.md),
 * and the fault tests and `infra/kafka/start.sh` restart it often: a fleet's figures would depend on
 * how long ago that was. Rounds of 4,000 records alone at 2,000/s until one costs the broker within
 * 15 % of the one before (at most eight); returns the broker's CPU per record of each round, the last
 * one warm. `BENCH_WARM_BROKER=off` skips it and returns [].
 */
export async function warmBroker(brokers: string[], prefix: string): Promise<number[]> {
  if (process.env.BENCH_WARM_BROKER === 'off') return [];
  const warmUp = { round: 4000, rate: 2000, rounds: 8, untilSteady: true };
  const perRecordMs = await brokerCpuPerRecord(brokers, `${prefix}warm-`, warmUp);
  const rounds = perRecordMs.map((m) => m.toFixed(3)).join(' → ');
  console.log(
    `broker warm-up: ${perRecordMs.length} rounds of ${warmUp.round} records alone at ${warmUp.rate}/s; the broker's CPU per record ${rounds} ms`,
  );
  return perRecordMs;
}

/**
 * A script's cost meter: prints the load average at the script's start and now and, when the server does not preload
 * pg_stat_statements, says the statement counts are unknown; `phase` runs a measured phase between two
 * snapshots and prints its cost per unit; `save` writes every phase's report, with the load average at
 * the start and now, to docs/bench/<name>-cost.json.
 */
export async function costMeter(scope: CostScope) {
  const brokerWarmUp = await warmBroker(brokersFromEnv(scope.env), scope.env.TOPIC_PREFIX ?? 'bench-');
  const loadBeforePhases = loadAverage();
  console.log(
    `load average at the start of the run: ${loadAtStart}; before the measured phases: ${loadBeforePhases}`,
  );
  const statementStats = await enableStatementStats(scope);
  if (!statementStats) console.log(NO_STATEMENT_STATS);
  const phases: Record<string, CostReport> = {};
  return {
    phases,
    /** Runs `run` between two snapshots; the phase's cost is given per `units(result)` `unit`. */
    async phase<T>(
      name: string,
      run: () => Promise<T>,
      units: (result: T) => number,
      unit: string,
    ): Promise<{ result: T; cost: CostReport }> {
      const before = await costSnapshot(scope);
      const result = await run();
      const after = await costSnapshot(scope);
      const cost = costReport(before, after, units(result), unit);
      phases[name] = cost;
      return { result, cost };
    },
    save(name: string): string {
      const file = join(REPO_ROOT, 'docs', 'bench', `${name}-cost.json`);
      const figures = {
        loadAtStart,
        loadBeforePhases,
        loadAtEnd: loadAverage(),
        statementStats,
        // The broker's CPU per record (ms) by warm-up round; an object, which prettier keeps as written.
        brokerWarmUp: Object.fromEntries(
          brokerWarmUp.map((ms, i) => [`round ${i + 1}`, Number(ms.toFixed(3))]),
        ),
        phases,
      };
      writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`);
      return file;
    },
  };
}
