import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, REPO_ROOT } from '@oan/testing';

/**
 * A Kafka broker of one test file's own (infra/kafka/start.sh on free ports and its own data
 * directory), so killing it disturbs no other fleet or CI run on the shared broker.
 */
export class OwnKafka {
  readonly env: Record<string, string>;
  readonly port: number;
  private constructor(port: number, controller: number) {
    this.port = port;
    this.env = {
      KAFKA_BROKERS: `127.0.0.1:${port}`,
      KAFKA_CONTROLLER_PORT: String(controller),
      KAFKA_DATA_DIR: join(REPO_ROOT, '.tmp', 'faults-kafka', String(port)),
      KAFKA_HEAP_OPTS: '-Xms128m -Xmx384m',
      // A JVM starting on a busy shared machine: the script's own bound, and ours above it.
      KAFKA_START_TIMEOUT: '180',
    };
  }

  static async start(): Promise<OwnKafka> {
    const kafka = new OwnKafka(await freePort(), await freePort());
    try {
      await kafka.up();
    } catch (err) {
      // A start that timed out may have left the JVM running.
      await kafka.stop().catch(() => undefined);
      throw err;
    }
    return kafka;
  }

  /** The address the broker listens on and advertises. */
  get address(): string {
    return this.env.KAFKA_BROKERS!;
  }

  /** Starts it (again), waiting until it answers. */
  up(): Promise<void> {
    return this.script('start.sh');
  }

  /** kill -9. */
  kill(): Promise<void> {
    return this.script('stop.sh', '--kill');
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.env.KAFKA_DATA_DIR!, { recursive: true, force: true });
  }

  // Asynchronous: a synchronous child would stall the load (and its timings) while the broker starts.
  private async script(name: 'start.sh' | 'stop.sh', ...args: string[]): Promise<void> {
    await promisify(execFile)('bash', [join(REPO_ROOT, 'infra/kafka', name), ...args], {
      env: { ...process.env, ...this.env },
      timeout: 200_000,
    });
  }
}
