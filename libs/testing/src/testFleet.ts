/*
 * The whole fleet for end-to-end tests (test/**, bench/**): every process of fleet.ts's plan as a
 * real child process on free ports, isolated by its own database, Redis prefix and topic prefix,
 * removed by `stop()`. A service's integration tests use inProcess.ts instead; `npm run dev` uses
 * fleet.ts's plan directly.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { dropDatabase } from '@oan/db';
import { createKafka, silentLogger } from '@oan/kafka';
import {
  fleetBundleDir,
  planFleet,
  REPO_ROOT,
  startProcess,
  waitReady,
  type FleetPlan,
  type RunningProcess,
} from './fleet.ts';
import type { ProcessKind, ProcessName, ReplicaCounts } from './replicas.ts';
import { Mailbox } from './mailbox.ts';

export interface TestFleetOptions {
  enableOpenApi?: boolean;
  env?: Record<string, string>;
  only?: ProcessName[];
  /** Replicas per kind (`{ auth: 2 }`); unnamed kinds run their default (fleet.ts). */
  replicas?: ReplicaCounts;
  /** Processes of the plan left unstarted, for the test to add with `launchLater` (a replica joining). */
  deferred?: ProcessName[];
  /**
   * `OAN_WEB_BASE_URL` is the fleet's own public origin (known only once its ports are chosen), so
   * every webUrl opens the edge's web frontend, as `npm run dev` does.
   */
  webAtPublicUrl?: boolean;
  /**
   * Variables of one process only, over the plan's, at every start of it (a fault test gives one
   * replica a `DATABASE_URL` through a proxy of its own).
   */
  envOf?: (name: ProcessName) => Record<string, string>;
  /**
   * Start every process from its source, as the image and `npm run dev` do, even where the
   * end-to-end run bundled the services (`OAN_FLEET_BUNDLES`, ADR 0048).
   */
  fromSources?: boolean;
  /** How long a process may take to answer `/ready` at a start or restart (default fleet.ts's). */
  readyTimeoutMs?: number;
}

/**
 * The whole fleet as real processes against the local Postgres, Redis and Kafka, isolated by a
 * unique database, Redis prefix and topic prefix; torn down (database dropped) by `stop()`.
 */
export class TestFleet {
  readonly running = new Map<ProcessName, RunningProcess>();
  readonly lines: string[] = [];
  readonly plan: FleetPlan;
  readonly mailbox: Mailbox;
  readonly id: string;
  readonly logDir: string;
  private readonly envOf: (name: ProcessName) => Record<string, string>;
  private readonly readyTimeoutMs: number | undefined;
  private constructor(
    plan: FleetPlan,
    mailbox: Mailbox,
    id: string,
    logDir: string,
    opts: Pick<TestFleetOptions, 'envOf' | 'readyTimeoutMs'> = {},
  ) {
    this.envOf = opts.envOf ?? (() => ({}));
    this.readyTimeoutMs = opts.readyTimeoutMs;
    this.plan = plan;
    this.mailbox = mailbox;
    this.id = id;
    this.logDir = logDir;
  }

  static async start(opts: TestFleetOptions = {}): Promise<TestFleet> {
    ensureInfra();
    const id = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    const mailbox = await Mailbox.start();
    const base: Record<string, string> = {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.FLEET_LOG_LEVEL ?? 'info',
      ENABLE_OPEN_API: String(opts.enableOpenApi ?? true),
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/oan_${id}`,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0',
      REDIS_PREFIX: `oan:${id}:`,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
      TOPIC_PREFIX: `${id}.`,
      JWT_SECRET: randomBytes(32).toString('hex'),
      ID_SECRET: randomBytes(32).toString('hex'),
      SMTP_URL: mailbox.url,
      STORAGE_DIR: join(REPO_ROOT, '.tmp', 'fleets', id, 'storage'),
      MAIL_FROM: 'OAN <no-reply@oan.test>',
      ...opts.env,
    };
    const bundleDir = opts.fromSources ? undefined : fleetBundleDir();
    const plan = await planFleet(base, {
      ...(opts.replicas ? { replicas: opts.replicas } : {}),
      ...(bundleDir ? { bundleDir } : {}),
    });
    if (opts.webAtPublicUrl) {
      plan.env.OAN_WEB_BASE_URL = plan.publicUrl;
      for (const spec of plan.processes) spec.env.OAN_WEB_BASE_URL = plan.publicUrl;
    }
    const fleet = new TestFleet(plan, mailbox, id, join(REPO_ROOT, '.tmp', 'fleets', id), opts);
    try {
      for (const spec of plan.processes) {
        if (opts.only && !opts.only.includes(spec.name)) continue;
        if (opts.deferred?.includes(spec.name)) continue;
        fleet.launch(spec.name);
      }
      await Promise.all([...fleet.running.values()].map((p) => waitReady(p, fleet.readyTimeoutMs)));
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    return fleet;
  }

  get url(): string {
    return this.plan.publicUrl;
  }

  /** Every edge's origin (one unless `replicas.edge` says more). */
  get urls(): string[] {
    return this.plan.publicUrls;
  }

  /** The names of a kind's replicas in the plan, in order. */
  replicasOf(kind: ProcessKind): ProcessName[] {
    return this.plan.processes.filter((p) => p.kind === kind).map((p) => p.name);
  }

  /** The port a process of the plan listens on. */
  portOf(name: ProcessName): number {
    const spec = this.plan.processes.find((p) => p.name === name);
    if (!spec) throw new Error(`no process ${name} in this fleet`);
    return spec.port;
  }

  get env(): Record<string, string> {
    return this.plan.env;
  }

  private launch(name: ProcessName, env: Record<string, string> = {}): RunningProcess {
    const planned = this.plan.processes.find((p) => p.name === name)!;
    const spec = { ...planned, env: { ...planned.env, ...this.envOf(name), ...env } };
    const p = startProcess(spec, this.logDir, (line) => this.lines.push(line));
    this.running.set(name, p);
    return p;
  }

  /** Starts a process of the plan that is not running (a deferred one); `env` as for `restart`. */
  async launchLater(name: ProcessName, env: Record<string, string> = {}): Promise<void> {
    if (this.running.has(name)) throw new Error(`${name} is running already`);
    await waitReady(this.launch(name, env), this.readyTimeoutMs);
  }

  /** kill -9, as a crash would. */
  async kill(name: ProcessName): Promise<void> {
    const p = this.running.get(name);
    if (!p) return;
    p.child.kill('SIGKILL');
    await p.exited;
    this.running.delete(name);
  }

  /** SIGSTOP: the process holds its sockets, locks and leases but runs nothing until `resume`. */
  pause(name: ProcessName): void {
    this.running.get(name)?.child.kill('SIGSTOP');
  }

  /** SIGCONT after `pause`. */
  resume(name: ProcessName): void {
    this.running.get(name)?.child.kill('SIGCONT');
  }

  /** kill -9 and start again; `env` is added to the plan's for this start only (a fault switch). */
  async restart(name: ProcessName, env: Record<string, string> = {}): Promise<void> {
    await this.kill(name);
    const p = this.launch(name, env);
    await waitReady(p, this.readyTimeoutMs);
  }

  async stop(): Promise<void> {
    for (const p of this.running.values()) {
      p.child.kill('SIGCONT');
      p.child.kill('SIGTERM');
    }
    await Promise.all(
      [...this.running.values()].map((p) =>
        Promise.race([p.exited, new Promise((r) => setTimeout(r, 5000)).then(() => p.child.kill('SIGKILL'))]),
      ),
    );
    this.running.clear();
    await this.mailbox.close();
    await Promise.all([
      dropDatabase(this.plan.env.DATABASE_URL!).catch(() => undefined),
      bounded(removeTopicsAndGroups(this.plan.env)),
      bounded(removeRedisKeys(this.plan.env)),
    ]);
  }
}

/** A clean-up step that cannot hold a test file's teardown hostage (a broker or server killed by a fault test). */
const bounded = (work: Promise<void>, ms = 15_000) =>
  Promise.race([work.catch(() => undefined), new Promise<void>((done) => setTimeout(done, ms).unref())]);

/** The fleet's topics and consumer groups (all named under its TOPIC_PREFIX) leave the broker with it. */
async function removeTopicsAndGroups(env: Record<string, string>): Promise<void> {
  const prefix = env.TOPIC_PREFIX;
  if (!prefix || !env.KAFKA_BROKERS) return;
  const kafka = createKafka({
    brokers: env.KAFKA_BROKERS.split(','),
    clientId: `fleet-cleanup-${prefix}`,
    logger: silentLogger,
  });
  try {
    const admin = await kafka.admin();
    const { groups } = await admin.listGroups();
    const ours = groups.map((g) => g.groupId).filter((g) => g.startsWith(prefix));
    if (ours.length > 0) await admin.deleteGroups(ours).catch(() => undefined);
    await kafka.deleteTopics((await admin.listTopics()).filter((t) => t.startsWith(prefix)));
  } finally {
    await kafka.close();
  }
}

/** The fleet's Redis keys (push stream, read-your-writes positions, limiter counters…) under REDIS_PREFIX. */
async function removeRedisKeys(env: Record<string, string>): Promise<void> {
  const prefix = env.REDIS_PREFIX;
  if (!prefix || !env.REDIS_URL) return;
  const redis = new Redis(env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }) as AsyncIterable<
      string[]
    >) {
      if (keys.length > 0) await redis.del(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

let infraChecked = false;
/** Starts Kafka (and checks Postgres/Redis) once per test process: idempotent scripts. */
export function ensureInfra(): void {
  if (infraChecked || process.env.OAN_INFRA_READY === '1') return;
  execFileSync('bash', [join(REPO_ROOT, 'infra/up.sh')], { stdio: 'inherit' });
  infraChecked = true;
}
