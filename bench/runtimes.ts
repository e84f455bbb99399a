/**
 * Runtimes (docs/runtimes.md, ADR 0030): WORKERS workers compete for JOBS jobs of one runtime through
 * the edge, each looping claim (`wait` 0) → finish `handled` until a claim answers `{job: null}`;
 * beside it, in the same run, the raw Postgres loop on a bare table (claim by `update … where id =
 * (select … for update skip locked)`, finish by a fenced `update`) with as many pooled connections.
 * Prints the claim → finish round trip percentiles, jobs/s, the ratio of the two and the load average.
 * The jobs' envelopes are written straight into `read.oan_event` (as the projector stores them) and
 * read into jobs before the clock starts. Usage:
 *   bash infra/node.sh node bench/runtimes.ts [jobs=2000] [workers=4]
 * Prints the fleet's CPU per job on each side (bench/cost.ts). Writes docs/bench/runtimes.json,
 * docs/bench/runtimes.svg and docs/bench/runtimes-cost.json.
 */
import pg from 'pg';
import { joinAccount, TestFleet } from '@oan/testing';
import { barChart } from './chart.ts';
import { costMeter, loadAverage } from './cost.ts';
import { fmt, percentiles } from './stats.ts';

const JOBS = Number(process.argv[2] ?? 2000);
const WORKERS = Number(process.argv[3] ?? 4);

// Envelopes of the shape the projector stores (~400 bytes), each a decision with a `reply`.
const SEED = `insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at)
  select $1, $2::bigint + s, gen_random_uuid(), 'gofer_question',
         json_build_object('v', 1, 'seq', ($2::bigint + s)::text, 'eventId', gen_random_uuid(),
           'type', 'gofer_question', 'goferId', 'bench-gofer', 'chatId', 'bench-gofer', 'source', 'own_gofer',
           'reply', json_build_object('method', 'POST', 'path', '/api/v1/gofers/bench-gofer/chat/messages'),
           'payload', json_build_object('messageId', gen_random_uuid(), 'content', repeat('x', 120)),
           'createdAt', now())::text, now()
    from generate_series(1, $3::int) s`;

interface Lap {
  laps: number[];
  ms: number;
}

/** WORKERS loops of `one` until it answers false; each lap is one claim → finish round trip. */
async function race(one: (worker: number) => Promise<boolean>): Promise<Lap> {
  const laps: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, w) => {
      for (;;) {
        const start = performance.now();
        if (!(await one(w))) return;
        laps.push(performance.now() - start);
      }
    }),
  );
  return { laps, ms: performance.now() - t0 };
}

const fleet = await TestFleet.start({
  only: ['auth', 'outbox', 'projector', 'gateway1', 'gateway2', 'runtimes', 'edge'],
  env: { LOG_LEVEL: 'warn' },
});
const pool = new pg.Pool({ connectionString: fleet.env.DATABASE_URL!, max: WORKERS });
try {
  const acc = await joinAccount(fleet.url, fleet.mailbox, `runtimes-${fleet.id}@example.com`);
  const headers = { authorization: `Bearer ${acc.apiKey}`, 'content-type': 'application/json' };
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${fleet.url}/api/v1${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const { runtimeId } = await call<{ runtimeId: string }>('POST', '/runtimes', {
    name: 'bench',
    policy: { types: ['gofer_question'], leaseSeconds: 300 },
  });

  // the account's envelopes after the registration, then read into jobs (a list reads the log first)
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ last: string }>(
      `insert into read.oan_account_seq (account_id, last_seq) values ($1, $2)
       on conflict (account_id) do update set last_seq = oan_account_seq.last_seq + $2
       returning (last_seq - $2)::text as last`,
      [acc.userId, JOBS],
    );
    await client.query(SEED, [acc.userId, rows[0]!.last, JOBS]);
    await client.query('commit');
  } finally {
    client.release();
  }
  await call('GET', `/runtimes/${runtimeId}/jobs?limit=1`);

  const meter = await costMeter(fleet);
  const jobs = (r: Lap) => r.laps.length;
  const { result: edge } = await meter.phase(
    'edge',
    () =>
      race(async (w) => {
        const { job } = await call<{ job: { jobId: string; version: number } | null }>(
          'POST',
          `/runtimes/${runtimeId}/claim`,
          { worker: `w${w}` },
        );
        if (!job) return false;
        await call('POST', `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`, {
          leaseOwner: `w${w}`,
          version: job.version,
          outcome: 'handled',
        });
        return true;
      }),
    jobs,
    'job through the edge (claim + finish)',
  );
  if (edge.laps.length !== JOBS) throw new Error(`the edge handled ${edge.laps.length} of ${JOBS} jobs`);

  // the same work on a bare table: queued rows in seq order, a fenced lease, nothing else
  await pool.query(`create schema if not exists bench;
    drop table if exists bench.jobs;
    create table bench.jobs (id bigint primary key, seq bigint not null, state text not null,
      version int not null default 0, lease_owner text, lease_until timestamptz);
    create index on bench.jobs (seq) where state = 'queued'`);
  await pool.query(
    `insert into bench.jobs (id, seq, state) select s, s, 'queued' from generate_series(1, $1::int) s`,
    [JOBS],
  );
  await pool.query('analyze bench.jobs');
  const { result: raw } = await meter.phase(
    'raw',
    () =>
      race(async (w) => {
        const { rows } = await pool.query<{ id: string; version: number }>(
          `update bench.jobs set state = 'leased', version = version + 1, lease_owner = $1,
         lease_until = now() + interval '300 seconds'
       where id = (select id from bench.jobs where state = 'queued' order by seq limit 1 for update skip locked)
       returning id, version`,
          [`w${w}`],
        );
        const job = rows[0];
        if (!job) return false;
        const done = await pool.query(
          `update bench.jobs set state = 'handled', lease_owner = null, lease_until = null
        where id = $1 and version = $2 and lease_owner = $3 and lease_until > now()`,
          [job.id, job.version, `w${w}`],
        );
        if (done.rowCount !== 1) throw new Error(`bare table: job ${job.id} lost its lease`);
        return true;
      }),
    jobs,
    'job on the bare table (2 statements)',
  );
  if (raw.laps.length !== JOBS) throw new Error(`the bare table handled ${raw.laps.length} of ${JOBS} jobs`);

  const e = percentiles(edge.laps);
  const r = percentiles(raw.laps);
  const edgeRate = (JOBS * 1000) / edge.ms;
  const rawRate = (JOBS * 1000) / raw.ms;
  console.log(`${JOBS} jobs of one runtime, ${WORKERS} workers competing, claim (wait 0) → finish handled`);
  console.log(
    `through the edge:   ${edgeRate.toFixed(0)} jobs/s; round trip p50 ${fmt(e.p50)} / p95 ${fmt(e.p95)} / p99 ${fmt(e.p99)} / max ${fmt(e.max)}`,
  );
  console.log(
    `bare table (SQL):   ${rawRate.toFixed(0)} jobs/s; round trip p50 ${fmt(r.p50)} / p95 ${fmt(r.p95)} / p99 ${fmt(r.p99)} / max ${fmt(r.max)}`,
  );
  console.log(
    `ratio: ${(rawRate / edgeRate).toFixed(1)}× the jobs/s on the bare table, ${(e.p50 / r.p50).toFixed(1)}× its p50 through the edge`,
  );
  console.log(`load average after the run: ${loadAverage()}`);
  const file = await barChart(
    'runtimes',
    [
      { label: `jobs/s through the edge (${WORKERS} workers)`, value: edgeRate },
      { label: `jobs/s, bare table FOR UPDATE SKIP LOCKED (${WORKERS} connections)`, value: rawRate },
    ],
    { title: `Runtimes: claim → finish, ${JOBS} jobs`, unit: 'jobs per second' },
  );
  console.log(`chart: ${file}`);
  console.log(`costs: ${meter.save('runtimes')}`);
} finally {
  await pool.end();
  await fleet.stop();
}
