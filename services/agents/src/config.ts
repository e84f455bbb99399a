import { randomBytes } from 'node:crypto';
import { commonEnv, envPort, loadConfig, z } from '@oan/config';
import { trustProxyList } from '@oan/http';

/** One agents replica: the ConnectOnion relay sockets and the agent directory. */
export const agentsEnv = commonEnv.extend({
  AGENTS_PORT: envPort(8186),
  /** Names this replica in the routing table and its Redis channel; unique per replica. */
  AGENTS_REPLICA_ID: z
    .string()
    .regex(/^[a-z0-9-]{1,32}$/)
    .default(() => randomBytes(4).toString('hex')),
  /** An agent socket without any frame for this long is dropped (seed 001: 120 s). */
  AGENT_STALE_MS: z.coerce.number().int().min(1000).default(120_000),
  JWT_SECRET: z.string().optional(),
  /**
   * The peers whose X-Forwarded-For is believed (the edge): addresses or CIDR blocks, `loopback`.
   * The limits count the hop the edge wrote, never one the client wrote before it.
   */
  TRUST_PROXY: trustProxyList,
  /** Per client address and minute: new relay sockets (refused 429 at the upgrade past it). */
  AGENTS_SOCKETS_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** Per client address and minute: ANNOUNCEs that append an `AgentAnnounced` (first or changed). */
  AGENTS_ANNOUNCES_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  /** Per client address and minute: frames sent on /ws/input sockets. */
  AGENTS_CLIENT_FRAMES_PER_MINUTE: z.coerce.number().int().min(1).default(600),
});
export type AgentsConfig = z.infer<typeof agentsEnv>;

export const loadAgentsConfig = (env: NodeJS.ProcessEnv = process.env): AgentsConfig =>
  loadConfig(agentsEnv, env);
