import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io, type Socket } from 'socket.io-client';
import type { OanEventEnvelope } from '@oan/protocol';
import { joinAccount, TestConnector, TestFleet } from '@oan/testing';

/**
 * Socket wake-ups of the runtimes extension through the edge (docs/runtimes.md, ADR 0034): a socket
 * that opted in is told `runtime_jobs` when a job waits; a v1 socket of the same account receives
 * exactly the `oan:event` emissions it received before, and nothing else.
 */
let fleet: TestFleet;
beforeAll(async () => {
  fleet = await TestFleet.start({
    env: { RUNTIMES_CLAIM_RECHECK_MS: '30000', WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_MS: '200' },
  });
});
afterAll(async () => {
  await fleet?.stop();
});

interface Heard {
  name: string;
  args: unknown[];
}

/** A bare socket recording every emission it receives, by name, in order. */
async function listen(
  token: string,
  auth: Record<string, unknown> = {},
): Promise<{ socket: Socket; heard: Heard[] }> {
  const heard: Heard[] = [];
  const socket = io(`${fleet.url}/oan`, {
    transports: ['websocket'],
    auth: { token, ...auth },
    reconnection: false,
    forceNew: true,
  });
  socket.onAny((name: string, ...args: unknown[]) => heard.push({ name, args }));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });
  return { socket, heard };
}

async function until(check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const envelopes = (heard: Heard[]) =>
  heard.filter((h) => h.name === 'oan:event').map((h) => h.args[0] as OanEventEnvelope);
const wakes = (heard: Heard[]) => heard.filter((h) => h.name === 'runtime_jobs').map((h) => h.args[0]);

describe('an account with a runtime and two sockets, one opted in to runtime wake-ups', () => {
  it('wakes the opted-in socket when a job waits, and the v1 socket sees exactly its events', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `runtime-wakes-${fleet.id}@example.com`);
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const { runtimeId } = (
      await c.rest<{ runtimeId: string }>('POST', '/runtimes', {
        name: 'desk',
        policy: { types: ['gofer_message', 'gofer_question'] },
      })
    ).body;
    const before = (await c.rest<{ seq: string }>('GET', '/events/cursor')).body.seq;
    const v1 = await listen(acc.apiKey);
    const worker = await listen(acc.apiKey, { runtimes: true });
    try {
      const created = await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
      expect(created.status).toBe(201);

      await until(() => wakes(worker.heard).length > 0);
      expect(wakes(worker.heard)[0]).toEqual({ runtimeId, name: 'desk', queued: expect.any(Number) });
      const claimed = await c.rest<{ job: { jobId: string; version: number } | null }>(
        'POST',
        `/runtimes/${runtimeId}/claim`,
        { worker: 'w1' },
      );
      const job = claimed.body.job!;

      // given back: the worker is told again
      const told = wakes(worker.heard).length;
      await c.rest('POST', `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`, {
        leaseOwner: 'w1',
        version: job.version,
        outcome: 'released',
      });
      await until(() => wakes(worker.heard).length > told);
      expect(wakes(worker.heard).at(-1)).toEqual({ runtimeId, name: 'desk', queued: expect.any(Number) });

      // the v1 socket: only `oan:event`, exactly the envelopes GET /events serves, as the opted-in one
      const page = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${before}&limit=200`);
      expect(page.body.length).toBeGreaterThan(0);
      await until(() => envelopes(v1.heard).length >= page.body.length);
      await new Promise((r) => setTimeout(r, 500));
      expect(v1.heard.every((h) => h.name === 'oan:event')).toBe(true);
      expect(envelopes(v1.heard)).toEqual(page.body);
      expect(envelopes(worker.heard)).toEqual(page.body);
    } finally {
      v1.socket.close();
      worker.socket.close();
    }
  });
});

describe('serverless workers woken by event webhooks', () => {
  it('claim on delivery: two functions get the same decision, exactly one gets its job', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `runtime-hooks-${fleet.id}@example.com`);
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const { runtimeId } = (
      await c.rest<{ runtimeId: string }>('POST', '/runtimes', {
        name: 'lambda',
        policy: { types: ['gofer_message'] },
      })
    ).body;
    // each function, on a delivery its runtime wants, claims once and finishes what it got
    const outcomes: { fn: string; delivered: string; claimed: string | null }[] = [];
    const fn = (name: string) =>
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (b: Buffer) => chunks.push(b));
        req.on('end', () => {
          res.writeHead(204).end(); // answered at once; the work runs under the lease
          const e = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OanEventEnvelope;
          if (e.type !== 'gofer_message') return;
          void (async () => {
            const claimed = await c.rest<{
              job: { jobId: string; version: number; event: OanEventEnvelope } | null;
            }>('POST', `/runtimes/${runtimeId}/claim`, { worker: name });
            const job = claimed.body.job;
            if (job) {
              await c.rest('POST', `/runtimes/${runtimeId}/jobs/${job.jobId}/finish`, {
                leaseOwner: name,
                version: job.version,
                outcome: 'handled',
              });
            }
            outcomes.push({ fn: name, delivered: e.eventId, claimed: job ? job.event.eventId : null });
          })();
        });
      });
    const servers = [fn('fn-a'), fn('fn-b')];
    try {
      for (const s of servers) {
        await new Promise<void>((done) => s.listen(0, '127.0.0.1', done));
        const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`;
        expect((await c.rest('POST', '/webhooks', { url })).status).toBe(201);
      }
      const created = await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
      expect(created.status).toBe(201);
      await until(() => outcomes.length >= 2);
      const decision = outcomes[0]!.delivered;
      expect(outcomes.filter((o) => o.delivered === decision)).toHaveLength(2);
      expect(outcomes.filter((o) => o.claimed === decision)).toHaveLength(1);
      expect(outcomes.filter((o) => o.claimed === null)).toHaveLength(1);
      const jobs = await c.rest<{ eventId: string; state: string }[]>('GET', `/runtimes/${runtimeId}/jobs`);
      expect(jobs.body.find((j) => j.eventId === decision)?.state).toBe('handled');
    } finally {
      for (const s of servers) s.close();
    }
  });
});
