/**
 * Discovery with many ready Gofers: seeds N ready Gofers (read.gofers + matching.discovery_terms,
 * profiles drawn from a 3,000-term vocabulary), then times `discoverFor` for fresh seeds — the full
 * path: ranking query (GIN on both term vectors, symmetric score in SQL), caps, and the proposal
 * append (up to 3 per seed, the default cap).
 *   bash infra/node.sh node bench/discovery.ts [gofers=100000] [seeds=50]
 * Prints the CPU per discovery run (this process, which runs discoverFor, and Postgres; bench/cost.ts).
 * Writes docs/bench/discovery.svg and docs/bench/discovery-cost.json.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { credentialsMigration } from '@oan/auth';
import { dropDatabase, openDatabase, sql } from '@oan/db';
import { createLogger } from '@oan/http';
import { readModelMigrations as projectorMigrations } from '@oan/readmodels';
import { createMatchingContext } from '../services/matching/src/app.ts';
import { loadMatchingConfig } from '../services/matching/src/config.ts';
import { discoveryIndexMigrations } from '../services/matching/src/infra/discoveryIndex.ts';
import { createMatchingStore, matchingMigrations } from '../services/matching/src/infra/store.ts';
import { discoverFor } from '../services/matching/src/reactors/discovery.ts';
import { barChart } from './chart.ts';
import { costMeter } from './cost.ts';
import { fmt, percentiles } from './stats.ts';

const N = Number(process.argv[2] ?? 100_000);
const SEEDS = Number(process.argv[3] ?? 50);
const id = randomBytes(4).toString('hex');
const url = `postgres://postgres@127.0.0.1:5432/oan_bench_${id}`;
const config = loadMatchingConfig({
  JWT_SECRET: 'x'.repeat(32),
  ID_SECRET: 'i'.repeat(32),
  DATABASE_URL: url,
  REDIS_PREFIX: `bench:${id}:`,
  LOG_LEVEL: 'warn',
});
const read = await openDatabase({ url, schema: 'projector', migrations: projectorMigrations });
// The credential view: discovery leaves banned accounts out.
const auth = await openDatabase({ url, schema: 'auth', migrations: [credentialsMigration] });
const store = createMatchingStore();
const orm = await openDatabase({
  url,
  schema: 'matching',
  migrations: [...matchingMigrations(store), ...discoveryIndexMigrations],
});
const redis = new Redis(config.REDIS_URL);
const ctx = createMatchingContext({ config, orm, redis, store });
const logger = createLogger('bench', 'warn');

try {
  const t0 = performance.now();
  // Terms t0..t2999; each Gofer demands 6 and offers 12, drawn with a skew so some terms are common.
  await sql(
    read.em.fork(),
    `insert into read.gofers (id, account_id, chat_id, name, description, locale, source_platform, discovery_status,
       human_review_triggers, "values", demands, created_at, updated_at)
     select 'g' || i, 'a' || i, 'c' || i, 'Gofer ' || i, '', 'en', 'other', 'ready_for_pairing', '[]', '[]', '[]', now(), now()
       from generate_series(1, ?) i`,
    [N],
  );
  await sql(
    orm.em.fork(),
    `insert into matching.discovery_terms (gofer_id, demand_tsv, offer_tsv, profile_at)
     select 'g' || i,
            array_to_tsvector(array(select 't' || floor(power(random(), 2) * 3000)::int from generate_series(1, 6 + (i % 2)))),
            array_to_tsvector(array(select 't' || floor(power(random(), 2) * 3000)::int from generate_series(1, 12 + (i % 3)))),
            now()
       from generate_series(1, ?) i`,
    [N],
  );
  await sql(orm.em.fork(), 'analyze matching.discovery_terms');
  await sql(read.em.fork(), 'analyze read.gofers');
  const seeded = (performance.now() - t0) / 1000;

  const lat: number[] = [];
  let proposals = 0;
  // No fleet: discoverFor runs in this process, so its CPU is this process's.
  const meter = await costMeter({
    env: { DATABASE_URL: url, REDIS_URL: config.REDIS_URL },
    running: new Map(),
    self: 'matching (this process)',
  });
  await meter.phase(
    'discovery',
    async () => {
      for (let s = 0; s < SEEDS; s++) {
        const seed = `seed-${randomUUID()}`;
        await sql(
          read.em.fork(),
          `insert into read.gofers (id, account_id, chat_id, name, description, locale, source_platform, discovery_status,
             human_review_triggers, "values", demands, created_at, updated_at)
           values (?, ?, 'c', 'Seed', '', 'en', 'other', 'ready_for_pairing', '[]', '[]', '[]', now(), now())`,
          [seed, `acct-${seed}`],
        );
        await sql(
          orm.em.fork(),
          `insert into matching.discovery_terms (gofer_id, demand_tsv, offer_tsv, profile_at)
           select ?, array_to_tsvector(array(select 't' || floor(power(random(), 2) * 3000)::int from generate_series(1, 6))),
                     array_to_tsvector(array(select 't' || floor(power(random(), 2) * 3000)::int from generate_series(1, 12))), now()`,
          [seed],
        );
        const start = performance.now();
        proposals += (await discoverFor({ ctx, logger, mode: 'confirm' }, seed)).length;
        lat.push(performance.now() - start);
      }
    },
    () => SEEDS,
    'discovery run (and its seed)',
  );
  const p = percentiles(lat);
  console.log(
    `${N} ready Gofers seeded in ${seeded.toFixed(1)} s; ${SEEDS} discovery runs, ${proposals} pairs proposed`,
  );
  console.log(
    `discoverFor (rank + caps + propose): p50 ${fmt(p.p50)}  p95 ${fmt(p.p95)}  p99 ${fmt(p.p99)}  max ${fmt(p.max)}`,
  );
  const file = await barChart(
    'discovery',
    (['p50', 'p95', 'p99', 'max'] as const).map((k) => ({ label: k, value: p[k] })),
    { title: `discoverFor with ${N} ready Gofers (${SEEDS} seeds)`, unit: 'ms' },
  );
  console.log(`chart: ${file}`);
  console.log(`costs: ${meter.save('discovery')}`);
} finally {
  redis.disconnect();
  await orm.close(true);
  await read.close(true);
  await auth.close(true);
  await dropDatabase(url);
}
