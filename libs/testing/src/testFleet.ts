import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { dropDatabase } from '@oan/db';
import {
  planFleet,
  REPO_ROOT,
  startProcess,
  waitReady,
  type FleetPlan,
  type ProcessName,
  type RunningProcess,
} from './fleet';
import { Mailbox } from './mailbox';

export interface TestFleetOptions {
  enableOpenApi?: boolean;
  env?: Record<string, string>;
  only?: ProcessName[];
}

/**
 * The whole fleet as real processes against the local Postgres, Redis and Kafka, isolated by a
 * unique database, Redis prefix and topic prefix; torn down (database dropped) by `stop()`.
 */
export class TestFleet {
  readonly running = new Map<ProcessName, RunningProcess>();
  readonly lines: string[] = [];
  private constructor(
    readonly plan: FleetPlan,
    readonly mailbox: Mailbox,
    readonly id: string,
    readonly logDir: string,
  ) {}

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
      SMTP_URL: mailbox.url,
      STORAGE_DIR: join(REPO_ROOT, '.tmp', 'fleets', id, 'storage'),
      MAIL_FROM: 'OAN <no-reply@oan.test>',
      ...opts.env,
    };
    const plan = await planFleet(base);
    const fleet = new TestFleet(plan, mailbox, id, join(REPO_ROOT, '.tmp', 'fleets', id));
    try {
      for (const spec of plan.processes) {
        if (opts.only && !opts.only.includes(spec.name)) continue;
        fleet.launch(spec.name);
      }
      await Promise.all([...fleet.running.values()].map((p) => waitReady(p)));
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    return fleet;
  }

  get url(): string {
    return this.plan.publicUrl;
  }

  get env(): Record<string, string> {
    return this.plan.env;
  }

  private launch(name: ProcessName): RunningProcess {
    const spec = this.plan.processes.find((p) => p.name === name)!;
    const p = startProcess(spec, this.logDir, (line) => this.lines.push(line));
    this.running.set(name, p);
    return p;
  }

  /** kill -9, as a crash would. */
  async kill(name: ProcessName): Promise<void> {
    const p = this.running.get(name);
    if (!p) return;
    p.child.kill('SIGKILL');
    await p.exited;
    this.running.delete(name);
  }

  async restart(name: ProcessName): Promise<void> {
    await this.kill(name);
    const p = this.launch(name);
    await waitReady(p);
  }

  async stop(): Promise<void> {
    for (const p of this.running.values()) p.child.kill('SIGTERM');
    await Promise.all(
      [...this.running.values()].map((p) =>
        Promise.race([p.exited, new Promise((r) => setTimeout(r, 5000)).then(() => p.child.kill('SIGKILL'))]),
      ),
    );
    this.running.clear();
    await this.mailbox.close();
    await dropDatabase(this.plan.env.DATABASE_URL!).catch(() => undefined);
  }
}

let infraChecked = false;
/** Starts Kafka (and checks Postgres/Redis) once per test process: idempotent scripts. */
export function ensureInfra(): void {
  if (infraChecked || process.env.OAN_INFRA_READY === '1') return;
  execFileSync('bash', [join(REPO_ROOT, 'infra/up.sh')], { stdio: 'inherit' });
  infraChecked = true;
}
