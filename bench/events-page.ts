/**
 * `GET /api/v1/events?since=&limit=200` under load (autocannon, keep-alive connections) through the
 * edge, through nginx (Debian's, one worker, `infra/nginx.sh` installs it) in front of both gateways,
 * and against one gateway directly, versus the raw Postgres keyset query for the same page run
 * with as many pooled connections. One account holds `events` envelopes among `others` × 200 rows of
 * other accounts; the page is a full one from the middle of its history. Prints the plan (it must be
 * an index scan on the (account_id, seq) primary key), latencies, requests/s and the ratios. Usage:
 *   bash infra/node.sh node bench/events-page.ts [events=10000] [others=500] [seconds=10] [connections=10]
 *     [paths=edge,nginx,gateway,raw]
 * `paths` measures only those (e.g. `edge` alone under `OAN_NODE_ARGS=--cpu-prof…`, so the gateways'
 * profiles hold one path's requests); every path is still warmed.
 * Prints the fleet's CPU per request of each path (bench/cost.ts). Writes docs/bench/events-page.svg
 * and docs/bench/events-page-cost.json.
 */
import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { joinAccount, REPO_ROOT, TestFleet, waitFor } from '@oan/testing';
import { barChart } from './chart.ts';
import { costMeter } from './cost.ts';
import { fmt, percentiles } from './stats.ts';

const EVENTS = Number(process.argv[2] ?? 10_000);
const OTHERS = Number(process.argv[3] ?? 500);
const SECONDS = Number(process.argv[4] ?? 10);
const CONNECTIONS = Number(process.argv[5] ?? 10);
const ALL_PATHS = ['edge', 'nginx', 'gateway', 'raw'];
const PATHS = new Set(process.argv[6]?.split(',') ?? ALL_PATHS);
for (const p of PATHS)
  if (!ALL_PATHS.includes(p)) throw new Error(`unknown path ${p}: one of ${ALL_PATHS.join(', ')}`);
const PAGE = 200;
// fetchEvents' query (libs/projection): `order by oan_event.seq`, since a bare `seq` would name the text
// alias and sort strings instead of walking the (account_id, seq) key.
const QUERY =
  'select seq::text as seq, envelope from read.oan_event where account_id = $1 and seq > $2 order by oan_event.seq limit $3';

// Envelope-shaped rows of about the stored size (~450 bytes), written straight into the read model.
const seed = (
  account: string,
) => `insert into read.oan_event (account_id, seq, event_id, type, envelope, created_at)
  select ${account}, s, gen_random_uuid(), 'system_notice',
         json_build_object('eventId', gen_random_uuid(), 'seq', s::text, 'type', 'system_notice',
           'createdAt', now(), 'payload', json_build_object('text', repeat('x', 300)))::text, now()
    from generate_series(1, $1::int) a, generate_series(1, $2::int) s`;

async function load(url: string, headers: Record<string, string>, duration = SECONDS) {
  const r = await autocannon({ url, headers, connections: CONNECTIONS, duration });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total };
}

async function rawSql(pool: pg.Pool, account: string, since: number) {
  const lat: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const r = await pool.query(QUERY, [account, since, PAGE]);
        if (r.rowCount !== PAGE) throw new Error(`page of ${r.rowCount}`);
        lat.push(performance.now() - t0);
      }
    }),
  );
  return { rps: lat.length / SECONDS, ...percentiles(lat), requests: lat.length };
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });

/**
 * nginx in front of the gateways for the events path only: what a proxy that is not Node costs on
 * the read path, against the edge in the same run. It passes the request as it is (the gateway
 * authenticates it); the edge's connector extensions (idempotency keys, limits) are not in it.
 */
async function startNginx(gatewayPorts: number[]): Promise<{ url: string; stop: () => void } | string> {
  const found = spawnSync('bash', [join(REPO_ROOT, 'infra', 'nginx.sh')], { encoding: 'utf8' });
  if (found.status !== 0) return `nginx unavailable: ${found.stderr.trim()}`;
  const bin = found.stdout.trim();
  const dir = mkdtempSync(join(tmpdir(), 'oan-nginx-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  # Keep-alive connections are never closed for their request count (nginx's default closes one
  # after 1,000 requests, which a load generator may see as an error): as the edge and Node do.
  keepalive_requests 1000000;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream gateways { ${gatewayPorts.map((p) => `server 127.0.0.1:${p};`).join(' ')} keepalive 64; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:${port};
    location /api/v1/events { proxy_pass http://gateways; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
`,
  );
  const child: ChildProcess = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'], {
    stdio: 'inherit',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/api/v1/events`).catch(() => undefined)) !== undefined, {
    timeoutMs: 10_000,
    what: 'nginx to listen',
  });
  return {
    url,
    stop: () => {
      child.kill('SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const fleet = await TestFleet.start({ env: { LOG_LEVEL: 'warn' } });
// Idle connections are kept: one that closed during a phase (the seeding ones, after their 10 s idle
// timeout) would take its backend's CPU out of that phase's Postgres figure.
const pool = new pg.Pool({
  connectionString: fleet.env.DATABASE_URL!,
  max: CONNECTIONS,
  idleTimeoutMillis: 0,
});
try {
  const acc = await joinAccount(fleet.url, fleet.mailbox, `page-${fleet.id}@example.com`);
  await pool.query(seed(`'other-' || a`), [OTHERS, 200]);
  await pool.query(seed('$3::text'), [1, EVENTS, acc.userId]);
  await pool.query('analyze read.oan_event');
  const since = Math.floor(EVENTS / 2);
  const plan = await pool.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${QUERY}`, [
    acc.userId,
    since,
    PAGE,
  ]);
  const planText = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
  const scan = /(Index Only Scan|Bitmap Index Scan|Index Scan)(?: Backward)? (?:using|on) (\S+)/.exec(
    planText,
  );
  const index = scan ? `${scan[1]} on ${scan[2]}` : 'NO INDEX SCAN';
  const sorted = /Sort Key/.test(planText) ? ', then a sort' : ', in key order (no sort)';

  const path = `/api/v1/events?since=${since}&limit=${PAGE}`;
  const headers = { authorization: `Bearer ${acc.apiKey}` };
  const gateway = fleet.plan.processes.find((p) => p.name === 'gateway1')!;
  const gatewayPorts = fleet.plan.processes.filter((p) => /^gateway\d+$/.test(p.name)).map((p) => p.port);
  const nginx = await startNginx(gatewayPorts);
  // Warm every path first (JIT, pools, keep-alive connections), unmetered: the first phase measured
  // would otherwise pay the gateways' warm-up for the others.
  for (const base of [
    fleet.url,
    typeof nginx === 'string' ? undefined : nginx.url,
    `http://127.0.0.1:${gateway.port}`,
  ])
    if (base) await load(`${base}${path}`, headers, 3);
  const meter = await costMeter(fleet);
  const requests = (r: { requests: number }) => r.requests;
  type Result = Awaited<ReturnType<typeof load>>;
  const measure = async (name: string, what: string, run: () => Promise<Result>) =>
    PATHS.has(name) ? (await meter.phase(name, run, requests, what)).result : undefined;
  const edge = await measure('edge', 'GET /events through the edge', () =>
    load(`${fleet.url}${path}`, headers),
  );
  let viaNginx: Result | undefined;
  if (typeof nginx === 'string') console.log(nginx);
  else {
    try {
      viaNginx = await measure('nginx', 'GET /events through nginx to the gateways', () =>
        load(`${nginx.url}${path}`, headers),
      );
    } finally {
      nginx.stop();
    }
  }
  const direct = await measure('gateway', 'GET /events on the gateway', () =>
    load(`http://127.0.0.1:${gateway.port}${path}`, headers),
  );
  const raw = await measure('raw', 'raw keyset query', () => rawSql(pool, acc.userId, since));

  console.log(
    `${EVENTS} events for the account, ${OTHERS * 200} for ${OTHERS} others; page of ${PAGE} from seq ${since}; ` +
      `${CONNECTIONS} connections for ${SECONDS} s each`,
  );
  console.log(`plan (${index}${sorted}):\n  ${planText.replaceAll('\n', '\n  ')}`);
  const rows: [string, string, Result | undefined][] = [
    ['edge', 'edge → gateway → Postgres:', edge],
    ['nginx', 'nginx → gateway → Postgres:', viaNginx],
    ['gateway', 'gateway directly:', direct],
    ['raw Postgres', 'raw Postgres keyset query:', raw],
  ];
  for (const [, n, x] of rows)
    if (x)
      console.log(
        `${n.padEnd(28)} ${x.rps.toFixed(0).padStart(6)} req/s  p50 ${fmt(x.p50)}  p99 ${fmt(x.p99)}`,
      );
  if (raw && edge && direct)
    console.log(
      `ratio raw/edge req/s ${(raw.rps / edge.rps).toFixed(1)}x, edge/raw p50 ${(edge.p50 / raw.p50).toFixed(1)}x; ` +
        `raw/gateway req/s ${(raw.rps / direct.rps).toFixed(1)}x, gateway/raw p50 ${(direct.p50 / raw.p50).toFixed(1)}x`,
    );
  const cpu = (name: string) => meter.phases[name]?.perUnit.cpuMs.toFixed(2) ?? '-';
  const share = (x: Result | undefined) =>
    x && direct ? `${((x.rps / direct.rps) * 100).toFixed(0)} %` : '-';
  console.log(
    `CPU ms per request, fleet and servers: edge ${cpu('edge')}, nginx ${cpu('nginx')}, gateway directly ${cpu('gateway')}; ` +
      `edge/gateway req/s ${share(edge)}, nginx/gateway req/s ${share(viaNginx)}`,
  );
  const file = await barChart(
    'events-page',
    rows.flatMap(([label, , x]) => (x ? [{ label: `${label} (p50 ${fmt(x.p50)})`, value: x.rps }] : [])),
    { title: `GET /events, page of ${PAGE}, ${CONNECTIONS} connections`, unit: 'requests/s' },
  );
  console.log(`chart: ${file}`);
  console.log(`costs: ${meter.save('events-page')}`);
} finally {
  await pool.end();
  await fleet.stop();
}
