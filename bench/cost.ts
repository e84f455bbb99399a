/**
 * The cost report: what a phase of a benchmark cost, counted rather than estimated, so it
 * can be divided by the commands or events the phase moved. Before and after the phase it reads:
 * - Postgres: pg_stat_database of the fleet's database (commits, rollbacks) and, when the server
 *   preloads pg_stat_statements, every statement's calls (statements = round trips: the services send
 *   one statement per round trip);
 * - Kafka: every fleet process's `oan_kafka_requests_total` (its kafkajs clients' requests by API);
 * - Redis: INFO commandstats (calls per command, the whole server: run benchmarks alone);
 * - CPU: each fleet process's user + system time from /proc, and the server processes' (postgres,
 *   the Kafka JVM, redis-server) by name.
 */
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { Redis } from 'ioredis';
import type { TestFleet } from '@oan/testing';

export interface CostSnapshot {
  at: number;
  db: { commits: number; rollbacks: number };
  statements: Map<string, number> | null;
  kafka: Map<string, number>;
  redis: Map<string, number>;
  cpu: Map<string, number>;
}

const TICKS = 100; // USER_HZ

/** utime + stime of a live process in seconds (fields 14 and 15 of /proc/<pid>/stat); throws once it ended. */
export function cpuSecondsOf(pid: number | string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

function cpuByKind(fleet: TestFleet): Map<string, number> {
  const out = new Map<string, number>();
  const add = (k: string, v: number) => out.set(k, (out.get(k) ?? 0) + v);
  const fleetPids = new Map<number, string>();
  for (const [name, p] of fleet.running)
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
      if (cmd.startsWith('postgres') || cmd.includes('/postgres ')) add('postgres', seconds);
      else if (cmd.includes('kafka.Kafka') || cmd.includes('kafka/target')) add('kafka', seconds);
      else if (cmd.startsWith('redis-server')) add('redis', seconds);
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

async function kafkaRequests(fleet: TestFleet): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const [name, p] of fleet.running) {
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

export async function costSnapshot(fleet: TestFleet): Promise<CostSnapshot> {
  const url = fleet.env.DATABASE_URL!;
  const db = new URL(url).pathname.slice(1);
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const [kafka, redis] = await Promise.all([
      kafkaRequests(fleet),
      redisCalls(fleet.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0'),
    ]);
    const d = await c.query<{ commits: string; rollbacks: string }>(
      'select xact_commit::text as commits, xact_rollback::text as rollbacks from pg_stat_database where datname = $1',
      [db],
    );
    let statements: Map<string, number> | null = null;
    try {
      const s = await c.query<{ query: string; calls: string }>(
        `select query, calls::text as calls from pg_stat_statements s join pg_database d on d.oid = s.dbid
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
      db: { commits: Number(d.rows[0]?.commits ?? 0), rollbacks: Number(d.rows[0]?.rollbacks ?? 0) },
      statements,
      kafka,
      redis,
      cpu: cpuByKind(fleet),
    };
  } finally {
    await c.end();
  }
}

/** Makes pg_stat_statements readable from the fleet's database when the server preloads it. */
export async function enableStatementStats(fleet: TestFleet): Promise<boolean> {
  const c = new pg.Client({ connectionString: fleet.env.DATABASE_URL! });
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

export interface CostReport {
  units: number;
  unit: string;
  seconds: number;
  perUnit: {
    pgStatements: number | null;
    pgCommits: number;
    kafkaRequests: number;
    kafkaProduce: number;
    kafkaFetch: number;
    kafkaOffsetCommit: number;
    redisCalls: number;
    cpuMs: number;
  };
  cpuMsPerUnit: Record<string, number>;
  kafkaPerUnit: Record<string, number>;
  redisPerUnit: Record<string, number>;
  topStatements: { calls: number; perUnit: number; query: string }[];
}

/** Prints the phase's cost per unit (a command, an event) and returns it. */
export function costReport(
  before: CostSnapshot,
  after: CostSnapshot,
  units: number,
  unit: string,
): CostReport {
  const r = (x: number) => Math.round((x / units) * 100) / 100;
  const statements = before.statements && after.statements ? diff(before.statements, after.statements) : null;
  // The snapshot's own reads are not the fleet's work.
  if (statements) for (const k of [...statements.keys()]) if (/pg_stat_/.test(k)) statements.delete(k);
  const kafka = diff(before.kafka, after.kafka);
  const redis = diff(before.redis, after.redis);
  const cpu = diff(before.cpu, after.cpu);
  const report: CostReport = {
    units,
    unit,
    seconds: (after.at - before.at) / 1000,
    perUnit: {
      pgStatements: statements ? r(sum(statements)) : null,
      pgCommits: r(after.db.commits - before.db.commits),
      kafkaRequests: r(sum(kafka)),
      kafkaProduce: r(sum(kafka, (k) => k.endsWith(' Produce'))),
      kafkaFetch: r(sum(kafka, (k) => k.endsWith(' Fetch'))),
      kafkaOffsetCommit: r(sum(kafka, (k) => k.endsWith(' OffsetCommit'))),
      redisCalls: r(sum(redis, (k) => k !== 'info')),
      cpuMs: r(sum(cpu) * 1000),
    },
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
  console.log(`cost per ${unit} (${units} in ${report.seconds.toFixed(1)} s):`);
  console.log(
    `  postgres: ${p.pgStatements ?? 'n/a (pg_stat_statements not preloaded)'} statements, ${p.pgCommits} commits`,
  );
  console.log(
    `  kafka: ${p.kafkaRequests} requests (produce ${p.kafkaProduce}, fetch ${p.kafkaFetch}, offset commit ${p.kafkaOffsetCommit})`,
  );
  console.log(`  redis: ${p.redisCalls} calls`);
  console.log(
    `  cpu: ${p.cpuMs} ms (${Object.entries(report.cpuMsPerUnit)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')})`,
  );
  if (process.env.COST_DETAIL) {
    for (const [k, v] of Object.entries(report.kafkaPerUnit)) console.log(`    kafka ${k}: ${v}`);
    for (const [k, v] of Object.entries(report.redisPerUnit)) console.log(`    redis ${k}: ${v}`);
    for (const s of report.topStatements) console.log(`    ${s.perUnit} × ${s.query}`);
  }
  return report;
}
