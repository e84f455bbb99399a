/** The agents read model (the ConnectOnion relay's directory): tables, projection, queries. */
export { agentsTables } from './tables.ts';
export { agentsProjection } from './projection.ts';
export { onlineAgent, onlineAgents, type AgentRow } from './queries.ts';
