/*
 * The fleet's plan, one of three ways to start the system: which processes make up the fleet, their
 * ports and environment, and how to start one as a child process. `npm run dev` (infra/dev.ts) runs
 * it on fixed ports; testFleet.ts runs it isolated for end-to-end tests; inProcess.ts is the
 * in-process world of one service's integration tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FLEET_NODE_FLAGS } from '@oan/config';
import { freePort, waitFor } from './ports.ts';
import {
  DEFAULT_REPLICAS,
  replicaName,
  type ProcessKind,
  type ProcessName,
  type ReplicaCounts,
} from './replicas.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface ProcessSpec {
  name: ProcessName;
  kind: ProcessKind;
  entry: string;
  port: number;
  /** Where its `/metrics` answer when not on `port` (the edge's port is the public origin). */
  metricsPort?: number;
  env: Record<string, string>;
  /** Node flags for this process alone, after OAN_NODE_ARGS (a benchmark's `--inspect` port). */
  nodeArgs?: string[];
}

export interface FleetPlan {
  env: Record<string, string>;
  processes: ProcessSpec[];
  /** The first edge's origin; every edge is in `publicUrls`. */
  publicUrl: string;
  publicUrls: string[];
}

/** The native ports of replica 1 of each kind (`npm run dev`); replica i adds 100 × (i − 1). */
const FIXED_PORTS = {
  auth: 8181,
  gofers: 8182,
  storage: 8183,
  matching: 8184,
  conversations: 8185,
  agents: 8186,
  projector: 8188,
  outbox: 8189,
  edgeMetrics: 8190,
  gateway: 8191,
  runtimes: 8196,
} as const;

/** A service's entry point as the image and `npm run dev` run it: its TypeScript source. */
export const sourceEntry = (kind: ProcessKind): string => join(REPO_ROOT, 'services', kind, 'src/main.ts');

/**
 * The directory of bundled services the fleets start from (ADR 0048): `OAN_FLEET_BUNDLES`, set by the
 * e2e run's global setup; unset or `off` means the sources.
 */
export function fleetBundleDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = env.OAN_FLEET_BUNDLES;
  return dir && dir !== 'off' ? dir : undefined;
}

/**
 * The whole fleet as processes: the same plan runs `npm run dev` and the end-to-end tests.
 * `base` is the shared environment (database, Redis and topic prefixes, secrets, switches);
 * `replicas` how many of each kind run (docs/architecture.md says which may run how many).
 */
export async function planFleet(
  base: Record<string, string>,
  opts: {
    fixedPorts?: boolean;
    replicas?: ReplicaCounts;
    /** Where bundleServices (bundle.ts) put the services: each process starts from its bundle. */
    bundleDir?: string;
  } = {},
): Promise<FleetPlan> {
  const count = (kind: ProcessKind) => opts.replicas?.[kind] ?? DEFAULT_REPLICAS[kind] ?? 1;
  const edgePort = Number(base.OAN_PORT ?? 8080);
  // The second gateway and agents replicas keep the ports they always had (8192, 8187); the edges
  // count up from OAN_PORT.
  const fixed = (key: keyof typeof FIXED_PORTS | 'edge', i: number): number => {
    if (key === 'edge') return edgePort + i - 1;
    if (i === 2 && (key === 'gateway' || key === 'agents')) return FIXED_PORTS[key] + 1;
    return FIXED_PORTS[key] + 100 * (i - 1);
  };
  const ports = async (key: keyof typeof FIXED_PORTS | 'edge', n: number) => {
    const out: number[] = [];
    for (let i = 1; i <= n; i++) out.push(opts.fixedPorts ? fixed(key, i) : await freePort());
    return out;
  };
  const p = {
    edge: await ports('edge', count('edge')),
    edgeMetrics: await ports('edgeMetrics', count('edge')),
    auth: await ports('auth', count('auth')),
    gofers: await ports('gofers', count('gofers')),
    storage: await ports('storage', count('gofers')),
    matching: await ports('matching', count('matching')),
    conversations: await ports('conversations', count('conversations')),
    agents: await ports('agents', count('agents')),
    projector: await ports('projector', count('projector')),
    outbox: await ports('outbox', count('outbox')),
    gateway: await ports('gateway', count('gateway')),
    runtimes: await ports('runtimes', count('runtimes')),
  };
  const url = (port: number) => `http://127.0.0.1:${port}`;
  const urls = (ps: number[]) => ps.map(url).join(',');
  // Object storage is the gofers, matching and conversations services' alone; the key of derived ids
  // is auth's and matching's alone (they derive account and thread ids); the others get the shared variables.
  const { STORAGE_DIR, STORAGE_DRIVER, ID_SECRET, ...rest } = base;
  const ids: Record<string, string> = ID_SECRET ? { ID_SECRET } : {};
  const s3 = Object.fromEntries(Object.entries(rest).filter(([k]) => k.startsWith('S3_')));
  const env = Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith('S3_')));
  // The outbox publisher, the projector and the agents relay neither sign nor check an OAN token: only
  // auth (which signs) and the processes that verify one get the key.
  const { JWT_SECRET: _key, ...keyless } = env;
  // Every replica of a kind: the same environment but for what names the replica (`extra(i)`).
  const kind = (
    k: ProcessKind,
    ps: number[],
    extra: (i: number) => Record<string, string>,
    shared = env,
  ): ProcessSpec[] =>
    ps.map((port, idx) => ({
      name: replicaName(k, idx + 1),
      kind: k,
      entry: opts.bundleDir ? join(opts.bundleDir, `${k}.mjs`) : sourceEntry(k),
      port,
      env: { ...shared, ...extra(idx + 1) },
    }));
  // The edge owns no data: it gets the switches it reads, and the credential view and Redis of the
  // connector extensions (idempotency keys, the opt-in RATE_LIMIT_PER_MINUTE), and auth's
  // Google settings, to offer Google sign-in on the page exactly when auth verifies its tokens.
  const EDGE_READS = [
    'NODE_ENV',
    'LOG_LEVEL',
    'ENABLE_OPEN_API',
    'HOST',
    'DATABASE_URL',
    'REDIS_URL',
    'REDIS_PREFIX',
    'JWT_SECRET',
    'RATE_LIMIT_PER_MINUTE',
    'GOOGLE_CLIENT_ID',
    'GOOGLE_JWKS_URL',
    'GOOGLE_AUTHORIZATION_URL',
  ];
  const edgeShared = Object.fromEntries(Object.entries(env).filter(([k]) => EDGE_READS.includes(k)));
  // The filesystem object store (the default) serves signed URLs, which clients fetch without any
  // credentials, from a gofers process's listener; matching signs counterpart-attachment URLs and
  // conversations stores and signs its attachments for that same listener and directory, starting
  // none. Every gofers replica stores into the one directory and signs for the first one's listener.
  // With STORAGE_DRIVER=s3 the three get the S3_* variables instead, and the bucket signs the URLs.
  const storage = (port: number) =>
    STORAGE_DRIVER === 's3'
      ? { STORAGE_DRIVER, ...s3 }
      : {
          STORAGE_DRIVER: STORAGE_DRIVER ?? 'fs',
          ...(STORAGE_DIR ? { STORAGE_DIR } : {}),
          STORAGE_PORT: String(port),
          STORAGE_PUBLIC_URL: url(p.storage[0]!),
        };
  const services = {
    AUTH_URL: urls(p.auth),
    GOFERS_URL: urls(p.gofers),
    MATCHING_URL: urls(p.matching),
    CONVERSATIONS_URL: urls(p.conversations),
  };
  const processes: ProcessSpec[] = [
    ...kind('auth', p.auth, (i) => ({ AUTH_PORT: String(p.auth[i - 1]), ...ids })),
    ...kind('gofers', p.gofers, (i) => ({
      GOFERS_PORT: String(p.gofers[i - 1]),
      ...storage(p.storage[i - 1]!),
      // Published Gofers announce (ADR 0023) on the relay's replicas, their keys sealed with
      // a secret the gofers process derives from JWT_SECRET (so `npm run dev` opens them again after a restart).
      GOFER_RELAY_URLS: urls(p.agents),
      // The A2A agent cards name the edge's origin (ADR 0035).
      GOFER_A2A_PUBLIC_URL: url(p.edge[0]!),
    })),
    ...kind('matching', p.matching, (i) => ({
      MATCHING_PORT: String(p.matching[i - 1]),
      ...ids,
      ...storage(p.storage[0]!),
    })),
    ...kind('conversations', p.conversations, (i) => ({
      CONVERSATIONS_PORT: String(p.conversations[i - 1]),
      ...storage(p.storage[0]!),
    })),
    // Runtimes read the envelopes from read.oan_event and wake held claims from the push stream;
    // they verify credentials, so they get the key, which also signs their internal call to auth
    // (the `runtime_job_waiting` notice of the takeover sweep); they carry out replies through the
    // owning services.
    ...kind('runtimes', p.runtimes, (i) => ({ RUNTIMES_PORT: String(p.runtimes[i - 1]), ...services })),
    ...kind('outbox', p.outbox, (i) => ({ OUTBOX_PORT: String(p.outbox[i - 1]) }), keyless),
    ...kind('projector', p.projector, (i) => ({ PROJECTOR_PORT: String(p.projector[i - 1]) }), keyless),
    ...kind('gateway', p.gateway, (i) => ({
      GATEWAY_PORT: String(p.gateway[i - 1]),
      GATEWAY_ID: `g${i}`,
      AUTH_URL: services.AUTH_URL,
    })),
    // The ConnectOnion agent relay (its replicas share their routing through Redis).
    ...kind(
      'agents',
      p.agents,
      (i) => ({ AGENTS_PORT: String(p.agents[i - 1]), AGENTS_REPLICA_ID: `a${i}` }),
      keyless,
    ),
    ...kind(
      'edge',
      p.edge,
      (i) => ({
        OAN_PORT: String(p.edge[i - 1]),
        EDGE_METRICS_PORT: String(p.edgeMetrics[i - 1]),
        ...services,
        RUNTIMES_URL: urls(p.runtimes),
        GATEWAY_URLS: urls(p.gateway),
        AGENTS_URLS: urls(p.agents),
      }),
      edgeShared,
    ).map((spec, idx) => ({ ...spec, metricsPort: p.edgeMetrics[idx]! })),
  ];
  return { env, processes, publicUrl: url(p.edge[0]!), publicUrls: p.edge.map(url) };
}

export interface RunningProcess {
  spec: ProcessSpec;
  child: ChildProcess;
  exited: Promise<number | null>;
  /** The last lines it printed (to say why it died without opening its log). */
  lastLines: string[];
}

/**
 * How node runs our TypeScript: Node 24 erases the types itself (the default, ADR 0001), or
 * `OAN_TS_LOADER=tsx` puts tsx's loader in front, as before (bench/startup.ts measures both).
 */
export function loaderArgs(): string[] {
  return process.env.OAN_TS_LOADER === 'tsx' ? ['--import', 'tsx'] : [];
}

/** Where the fleet's processes keep Node's compile cache unless NODE_COMPILE_CACHE says otherwise. */
export const COMPILE_CACHE_DIR = join(REPO_ROOT, '.data', 'node-compile-cache');

/** Starts one process of the plan with its output appended to `<logDir>/<name>.log`. */
export function startProcess(
  spec: ProcessSpec,
  logDir: string,
  onLine?: (line: string) => void,
): RunningProcess {
  mkdirSync(logDir, { recursive: true });
  const log: WriteStream = createWriteStream(join(logDir, `${spec.name}.log`), { flags: 'a' });
  // OAN_NODE_ARGS: extra node flags for every process of the fleet (e.g. `--cpu-prof --cpu-prof-dir=…`).
  const nodeArgs = (process.env.OAN_NODE_ARGS ?? '').split(' ').filter((a) => a.length > 0);
  const child = spawn(
    process.execPath,
    [...FLEET_NODE_FLAGS, ...nodeArgs, ...(spec.nodeArgs ?? []), ...loaderArgs(), spec.entry],
    {
      cwd: REPO_ROOT,
      // Node's compile cache (V8 code of every module, TypeScript included) in .data: a process started
      // again skips most of its compiling (ADR 0047). NODE_COMPILE_CACHE set by the caller wins, and
      // NODE_DISABLE_COMPILE_CACHE=1 turns it off.
      env: { NODE_COMPILE_CACHE: COMPILE_CACHE_DIR, ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lastLines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      log.write(chunk);
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        onLine?.(line);
        lastLines.push(line.slice(0, 2_000));
        if (lastLines.length > 8) lastLines.shift();
      }
    });
  }
  const exited = new Promise<number | null>((res) =>
    child.on('exit', (code) => {
      log.end();
      res(code);
    }),
  );
  return { spec, child, exited, lastLines };
}

/**
 * Resolves once the process answers `GET /ready` with 200. A process that exits fails this at once;
 * the timeout only bounds a slow start: twelve processes loading their dependencies together on two
 * busy cores took more than a minute (seen with other fleets beside).
 */
export async function waitReady(p: RunningProcess, timeoutMs = 120_000): Promise<void> {
  const ready = waitFor(
    async () => {
      const res = await fetch(`http://127.0.0.1:${p.spec.port}/ready`).catch(() => undefined);
      return res?.status === 200;
    },
    { timeoutMs, intervalMs: 200, what: `${p.spec.name} to be ready` },
  );
  const died = p.exited.then((code) => {
    throw new Error(
      `${p.spec.name} exited with ${code} during start-up; its last lines:\n${p.lastLines.join('\n')}`,
    );
  });
  await Promise.race([ready, died]);
  died.catch(() => undefined);
}
