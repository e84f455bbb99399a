import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '@oan/domain';
import { agentsAt } from './support/agents.ts';
import { agentsProjection } from '../src/agents/index.ts';
import { projectionSpec } from './support/projectionSpec.ts';

const address = `0x${Math.random().toString(16).slice(2)}`;
const agent = agentsAt(address);
const spec = projectionSpec(agentsProjection, {
  rows: { agents: 'select * from read.agents order by address' },
});

const announced = (connectionId: string, ts: number, summary: string) =>
  agent.AgentAnnounced({
    summary,
    endpoints: ['https://agent.example'],
    profile: JSON.stringify({ alias: 'echo' }),
    timestamp: ts,
    connectionId,
    announcedAt: new Date(ts * 1000).toISOString(),
  });
const departed = (connectionId: string, ts: number) =>
  agent.AgentDeparted({ connectionId, departedAt: new Date(ts * 1000).toISOString() });
const row = async () =>
  (
    await spec.query<{ summary: string; connection_id: string; online: boolean; endpoints: string[] }>(
      'select summary, connection_id, online, endpoints from read.agents where address = ?',
      [address],
    )
  )[0];

describe('read.agents, the relay directory', () => {
  const first = announced('a1.1', 1_700_000_000, 'first');
  const second = announced('a2.7', 1_700_000_100, 'second');

  it('keeps the latest announcement, and applying any event twice changes nothing', async () => {
    await spec.given(first, second, first);
    expect(await row()).toMatchObject({ summary: 'second', connection_id: 'a2.7', online: true });
    await spec.when(second);
    expect(await row()).toMatchObject({ summary: 'second', connection_id: 'a2.7', online: true });
  });

  it("ignores the departure of a replaced socket and applies its current socket's departure once", async () => {
    await spec.when(departed('a1.1', 1_700_000_200));
    expect((await row())?.online).toBe(true);
    const gone = departed('a2.7', 1_700_000_300);
    await spec.when(gone, gone);
    expect(await row()).toMatchObject({ connection_id: 'a2.7', online: false });
    await spec.when(announced('a1.9', 1_700_000_400, 'back'));
    expect(await row()).toMatchObject({
      summary: 'back',
      online: true,
      endpoints: ['https://agent.example'],
    });
  });
});

describe('an agent of its own address', () => {
  const other = agentsAt(`0x${Math.random().toString(16).slice(2)}`);
  spec.appliedTwice<AgentEvent>({
    AgentAnnounced: { event: () => other.AgentAnnounced() },
    AgentDeparted: { given: () => [other.AgentAnnounced()], event: () => other.AgentDeparted() },
  });
});
