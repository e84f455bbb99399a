// Shared helpers for the integration tests of @oan/kafka.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

export function brokersFromEnv(): string[] {
  return (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** Starts the broker if it is not running (infra/kafka/start.sh is idempotent). */
export function ensureBroker(): void {
  execFileSync('bash', ['infra/kafka/start.sh'], { cwd: repoRoot, stdio: 'inherit', timeout: 600_000 });
}

export async function waitUntil(cond: () => boolean, timeoutMs: number, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const uniqueSuffix = (): string => Math.random().toString(36).slice(2, 10);
