/**
 * The agents context's domain events (schemas/agents/*.avsc, version 1): the ConnectOnion agent
 * relay's directory (docs/agent-relay.md). Keyed by the agent's address, one stream per address.
 */

/** An agent's verified ANNOUNCE on a new relay socket, or one that changed what it says. */
export interface AgentAnnounced {
  /** `0x` + the raw Ed25519 public key in hex, as ConnectOnion addresses are written. */
  address: string;
  summary: string;
  endpoints: string[];
  /** The announced `profile` object as JSON text, or null. */
  profile: string | null;
  /** The agent's signed timestamp (epoch seconds). */
  timestamp: number;
  /** The relay socket it announced on (`<replicaId>.<n>`); a later socket replaces it. */
  connectionId: string;
  announcedAt: string;
}

/** The socket of the agent's latest announcement closed, went silent, or its relay replica died. */
export interface AgentDeparted {
  address: string;
  connectionId: string;
  reason: 'closed' | 'stale' | 'replica_lost';
  departedAt: string;
}

export type AgentEvent =
  { type: 'AgentAnnounced'; data: AgentAnnounced } | { type: 'AgentDeparted'; data: AgentDeparted };

export const agentStreamId = (address: string) => `agent-${address}`;
