import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OanEventEnvelope } from '@oan/protocol';
import { AgentEndpoint, joinAccount, TestConnector, TestFleet } from '@oan/testing';

/**
 * An HTTP agent through the edge (docs/runtimes.md, ADR 0033): a connector registers a runtime with
 * an endpoint, the fleet verifies it by a signed challenge, and its Gofer's greeting is pushed to the
 * agent as a job, which the agent's answer finishes.
 */
let fleet: TestFleet;
let agent: AgentEndpoint;
beforeAll(async () => {
  agent = await AgentEndpoint.start();
  fleet = await TestFleet.start({
    env: { RUNTIMES_ALLOW_LOOPBACK: 'true', RUNTIMES_DISPATCH_POLL_MS: '200', LOG_LEVEL: 'debug' },
  });
});
afterAll(async () => {
  await fleet?.stop();
  await agent?.close();
});

interface Runtime {
  runtimeId: string;
  state: string;
  secret?: string;
  health?: { lastSeenAt: string | null; consecutiveFailures: number };
}

describe('a connector with an HTTP agent', () => {
  it('binds it by the challenge and has its Gofer greeting pushed and handled', async () => {
    const acc = await joinAccount(fleet.url, fleet.mailbox, `endpoint-1-${fleet.id}@example.com`);
    const c = new TestConnector({ baseUrl: fleet.url, token: acc.apiKey });
    const before = (await c.rest<{ seq: string }>('GET', '/events/cursor')).body.seq;

    const created = await c.rest<Runtime>('POST', '/runtimes', {
      name: 'api-agent',
      policy: { types: ['gofer_message', 'gofer_question'] },
      endpoint: agent.url,
    });
    expect(created.status).toBe(201);
    expect(created.body.state).toBe('active');
    const { runtimeId, secret } = created.body;
    expect(secret).toMatch(/^whsec_/);
    const challenge = agent.requests.find((r) => r.json.runtimeId === runtimeId)!;
    expect(new Webhook(secret!).verify(challenge.body, challenge.headers as Record<string, string>)).toEqual(
      challenge.json,
    );
    // the owner may send the challenge again at any time
    const again = await c.rest<Runtime>('POST', `/runtimes/${runtimeId}/verify`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ state: 'active', health: { consecutiveFailures: 0 } });
    expect(again.body).not.toHaveProperty('secret');

    const gofer = await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' });
    expect(gofer.status).toBe(201);
    await expect
      .poll(
        async () => (await c.rest<{ state: string }[]>('GET', `/runtimes/${runtimeId}/jobs`)).body[0]?.state,
        { timeout: 30_000, interval: 200 },
      )
      .toBe('handled');

    const [job] = (await c.rest<{ jobId: string; attempts: number }[]>('GET', `/runtimes/${runtimeId}/jobs`))
      .body;
    const pushed = agent.jobs().filter((r) => r.json.jobId === job!.jobId);
    expect(pushed).toHaveLength(1);
    const push = pushed[0]!;
    expect(new Webhook(secret!).verify(push.body, push.headers as Record<string, string>)).toEqual(push.json);
    expect(push.json).toMatchObject({ attempts: 1, leaseOwner: 'endpoint', version: 1 });
    // the job's event is the envelope GET /events serves, byte for byte
    const page = await c.rest<OanEventEnvelope[]>('GET', `/events?since=${before}&limit=200`);
    const event = push.json.event as OanEventEnvelope;
    expect(event.goferId).toBe(gofer.body.goferId);
    const item = page.body.find((e) => e.eventId === event.eventId)!;
    expect(push.body).toContain(`"event":${JSON.stringify(item)}`);

    const shown = await c.rest<Runtime>('GET', `/runtimes/${runtimeId}`);
    expect(shown.body.health!.lastSeenAt).not.toBeNull();
    // a REST worker cannot take an endpoint's jobs
    const claim = await c.rest('POST', `/runtimes/${runtimeId}/claim`, { worker: 'w1' });
    expect(claim.status).toBe(409);
    expect(claim.body).toEqual({ error: expect.any(String), code: 'RUNTIME_HAS_ENDPOINT' });

    // the signing secret reaches no log line of any process, even at debug level
    expect(fleet.lines.some((l) => l.includes(`/runtimes/${runtimeId}/verify`))).toBe(true); // requests are logged
    const key = secret!.slice('whsec_'.length);
    expect(fleet.lines.filter((l) => l.includes(key) || l.includes(secret!))).toEqual([]);
  });
});
