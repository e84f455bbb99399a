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

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export type ProcessName =
  | 'auth'
  | 'gofers'
  | 'matching'
  | 'conversations'
  | 'runtimes'
  | 'outbox'
  | 'projector'
  | 'gateway1'
  | 'gateway2'
  | 'agents1'
  | 'agents2'
  | 'edge';

export interface ProcessSpec {
  name: ProcessName;
  entry: string;
  port: number;
  /** Where its `/metrics` answer when not on `port` (the edge's port is the public origin). */
  metricsPort?: number;
  env: Record<string, string>;
}

export interface FleetPlan {
  env: Record<string, string>;
  processes: ProcessSpec[];
  publicUrl: string;
}

/**
 * The whole fleet as processes: the same plan runs `npm run dev` and the end-to-end tests.
 * `base` is the shared environment (database, Redis and topic prefixes, secrets, switches).
 */
export async function planFleet(
  base: Record<string, string>,
  opts: { fixedPorts?: boolean } = {},
): Promise<FleetPlan> {
  const port = async (fixed: number) => (opts.fixedPorts ? fixed : freePort());
  const ports = {
    edge: opts.fixedPorts ? Number(base.OAN_PORT ?? 8080) : await freePort(),
    auth: await port(8181),
    gofers: await port(8182),
    storage: await port(8183),
    matching: await port(8184),
    conversations: await port(8185),
    agents1: await port(8186),
    agents2: await port(8187),
    projector: await port(8188),
    outbox: await port(8189),
    edgeMetrics: await port(8190),
    gateway1: await port(8191),
    gateway2: await port(8192),
    runtimes: await port(8196),
  };
  const url = (p: number) => `http://127.0.0.1:${p}`;
  // Object storage is the gofers, matching and conversations services' alone; the key of derived ids
  // is auth's and matching's alone (they derive account and thread ids); the others get the shared variables.
  const { STORAGE_DIR, STORAGE_DRIVER, ID_SECRET, ...rest } = base;
  const ids: Record<string, string> = ID_SECRET ? { ID_SECRET } : {};
  const s3 = Object.fromEntries(Object.entries(rest).filter(([k]) => k.startsWith('S3_')));
  const env = Object.fromEntries(Object.entries(rest).filter(([k]) => !k.startsWith('S3_')));
  // The outbox publisher, the projector and the agents relay neither sign nor check an OAN token: only
  // auth (which signs) and the processes that verify one get the key.
  const { JWT_SECRET: _key, ...keyless } = env;
  const svc = (
    name: ProcessName,
    dir: string,
    p: number,
    extra: Record<string, string>,
    shared = env,
  ): ProcessSpec => ({
    name,
    entry: join(REPO_ROOT, 'services', dir, 'src/main.ts'),
    port: p,
    env: { ...shared, ...extra },
  });
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
  // credentials, from the gofers process's listener; matching signs counterpart-attachment URLs and
  // conversations stores and signs its attachments for that same listener and directory, starting
  // none. With STORAGE_DRIVER=s3 the three get the S3_* variables instead, and the bucket signs the URLs.
  const storage =
    STORAGE_DRIVER === 's3'
      ? { STORAGE_DRIVER, ...s3 }
      : {
          STORAGE_DRIVER: STORAGE_DRIVER ?? 'fs',
          ...(STORAGE_DIR ? { STORAGE_DIR } : {}),
          STORAGE_PORT: String(ports.storage),
          STORAGE_PUBLIC_URL: url(ports.storage),
        };
  const edge: ProcessSpec = {
    ...svc(
      'edge',
      'edge',
      ports.edge,
      {
        OAN_PORT: String(ports.edge),
        EDGE_METRICS_PORT: String(ports.edgeMetrics),
        AUTH_URL: url(ports.auth),
        GOFERS_URL: url(ports.gofers),
        MATCHING_URL: url(ports.matching),
        CONVERSATIONS_URL: url(ports.conversations),
        RUNTIMES_URL: url(ports.runtimes),
        GATEWAY_URLS: `${url(ports.gateway1)},${url(ports.gateway2)}`,
        AGENTS_URLS: `${url(ports.agents1)},${url(ports.agents2)}`,
      },
      edgeShared,
    ),
    metricsPort: ports.edgeMetrics,
  };
  const processes: ProcessSpec[] = [
    svc('auth', 'auth', ports.auth, { AUTH_PORT: String(ports.auth), ...ids }),
    svc('gofers', 'gofers', ports.gofers, {
      GOFERS_PORT: String(ports.gofers),
      ...storage,
      // Published Gofers announce (ADR 0023) on the relay's replicas, their keys sealed with
      // a secret the gofers process derives from JWT_SECRET (so `npm run dev` opens them again after a restart).
      GOFER_RELAY_URLS: `${url(ports.agents1)},${url(ports.agents2)}`,
      // The A2A agent cards name the edge's origin (ADR 0035).
      GOFER_A2A_PUBLIC_URL: url(ports.edge),
    }),
    svc('matching', 'matching', ports.matching, {
      MATCHING_PORT: String(ports.matching),
      ...ids,
      ...storage,
    }),
    svc('conversations', 'conversations', ports.conversations, {
      CONVERSATIONS_PORT: String(ports.conversations),
      ...storage,
    }),
    // Runtimes read the envelopes from read.oan_event and wake held claims from the push stream;
    // they verify credentials, so they get the key, which also signs their internal call to auth
    // (the `runtime_job_waiting` notice of the takeover sweep); they carry out replies through the
    // owning services.
    svc('runtimes', 'runtimes', ports.runtimes, {
      RUNTIMES_PORT: String(ports.runtimes),
      AUTH_URL: url(ports.auth),
      GOFERS_URL: url(ports.gofers),
      MATCHING_URL: url(ports.matching),
      CONVERSATIONS_URL: url(ports.conversations),
    }),
    svc('outbox', 'outbox', ports.outbox, { OUTBOX_PORT: String(ports.outbox) }, keyless),
    svc('projector', 'projector', ports.projector, { PROJECTOR_PORT: String(ports.projector) }, keyless),
    svc('gateway1', 'gateway', ports.gateway1, {
      GATEWAY_PORT: String(ports.gateway1),
      GATEWAY_ID: 'g1',
      AUTH_URL: url(ports.auth),
    }),
    svc('gateway2', 'gateway', ports.gateway2, {
      GATEWAY_PORT: String(ports.gateway2),
      GATEWAY_ID: 'g2',
      AUTH_URL: url(ports.auth),
    }),
    // Two replicas of the ConnectOnion agent relay (their routing is shared through Redis).
    svc(
      'agents1',
      'agents',
      ports.agents1,
      { AGENTS_PORT: String(ports.agents1), AGENTS_REPLICA_ID: 'a1' },
      keyless,
    ),
    svc(
      'agents2',
      'agents',
      ports.agents2,
      { AGENTS_PORT: String(ports.agents2), AGENTS_REPLICA_ID: 'a2' },
      keyless,
    ),
    edge,
  ];
  return { env, processes, publicUrl: url(ports.edge) };
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
  const child = spawn(process.execPath, [...FLEET_NODE_FLAGS, ...nodeArgs, ...loaderArgs(), spec.entry], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
