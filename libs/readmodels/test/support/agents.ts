import { agentStreamId, type AgentEvent } from '@oan/domain';
import { at, eventBuilders } from './events.ts';

/** The relay directory's events for one address. */
export function agentsAt(address: string) {
  return eventBuilders<AgentEvent>(
    {
      AgentAnnounced: () => ({
        address,
        summary: 'an agent',
        endpoints: ['wss://relay.example'],
        profile: null,
        timestamp: 1,
        connectionId: 'c1',
        announcedAt: at(1),
      }),
      AgentDeparted: () => ({ address, connectionId: 'c1', reason: 'closed', departedAt: at(2) }),
    },
    ({ data }) => ({ streamId: agentStreamId(data.address), partitionKey: data.address }),
  );
}
