import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, joinAccount, REPO_ROOT, TestConnector, TestFleet, waitFor } from '@oan/testing';

/**
 * Jobs are read from the event table, not from Kafka, but the envelopes reach that table through the
 * broker: with this file's own broker killed -9 while workers claim and finish, every Gofer created
 * (201) still becomes exactly one job once the broker is back, and every job is handled once.
 */
let broker: Record<string, string>;
const kafka = async (script: 'start.sh' | 'stop.sh', ...args: string[]) => {
  await promisify(execFile)('bash', [join(REPO_ROOT, 'infra/kafka', script), ...args], {
    env: { ...process.env, ...broker },
    timeout: 90_000,
  });
};
let fleet: TestFleet;

beforeAll(async () => {
  const [port, controller] = [await freePort(), await freePort()];
  broker = {
    KAFKA_BROKERS: `127.0.0.1:${port}`,
    KAFKA_CONTROLLER_PORT: String(controller),
    KAFKA_DATA_DIR: join(REPO_ROOT, '.tmp', 'faults-kafka', String(port)),
    KAFKA_HEAP_OPTS: '-Xms128m -Xmx384m',
  };
  await kafka('start.sh');
  fleet = await TestFleet.start({ env: { KAFKA_BROKERS: broker.KAFKA_BROKERS! } });
}, 240_000);
afterAll(async () => {
  await fleet?.stop();
  if (broker) {
    await kafka('stop.sh', '--kill');
    rmSync(broker.KAFKA_DATA_DIR!, { recursive: true, force: true });
  }
});

interface Job {
  jobId: string;
  version: number;
  event: { goferId: string };
}

describe('when the Kafka broker is killed -9 while workers claim and finish, and started again', () => {
  it('makes every created Gofer’s greeting one job, each claimed and handled once', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `runtimes-kafka-${fleet.id}@example.com`);
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const { runtimeId } = (
      await c.rest<{ runtimeId: string }>('POST', '/runtimes', {
        name: 'greetings',
        policy: { types: ['gofer_message'] },
      })
    ).body;
    const created = new Set<string>();
    const create = async () => {
      const res = await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
      if (res.status === 201) created.add(res.body.goferId);
      else expect(res.status).toBeGreaterThanOrEqual(500); // refused cleanly while the broker is down
    };
    const claims: Job[] = [];
    const handled = new Map<string, number>();
    let stop = false;
    const worker = async (name: string) => {
      while (!stop) {
        const res = await c.rest<{ job: Job | null }>('POST', `/runtimes/${runtimeId}/claim`, {
          worker: name,
          wait: 1,
        });
        const job = res.status === 200 ? res.body.job : null;
        if (!job) continue;
        claims.push(job);
        const done = await c.rest('POST', `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`, {
          leaseOwner: name,
          version: job.version,
          outcome: 'handled',
        });
        expect(done.status).toBe(200);
        handled.set(job.jobId, (handled.get(job.jobId) ?? 0) + 1);
      }
    };
    const workers = [worker('w1'), worker('w2'), worker('w3')];
    for (let i = 0; i < 4; i++) await create();
    await kafka('stop.sh', '--kill');
    for (let i = 0; i < 3; i++) await create();
    await kafka('start.sh');
    for (let i = 0; i < 4; i++) await create();

    await waitFor(
      () => {
        const greeted = new Set(claims.map((j) => j.event.goferId));
        return [...created].every((g) => greeted.has(g));
      },
      { timeoutMs: 120_000, intervalMs: 500, what: 'a job for every created Gofer' },
    );
    stop = true;
    await Promise.all(workers);
    expect(created.size).toBeGreaterThanOrEqual(8);
    const jobs = (
      await c.rest<{ jobId: string; state: string; goferId: string }[]>(
        'GET',
        `/runtimes/${runtimeId}/jobs?limit=200`,
      )
    ).body;
    // one job per greeting, each handed out once and handled once
    expect(new Set(jobs.map((j) => j.goferId))).toEqual(created);
    expect(jobs.every((j) => j.state === 'handled')).toBe(true);
    expect(claims).toHaveLength(jobs.length);
    expect([...handled.values()].every((n) => n === 1)).toBe(true);
    expect(handled.size).toBe(jobs.length);
  });
});
