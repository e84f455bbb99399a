import type { Namespace, Socket } from 'socket.io';
import type { RuntimeJobsWake } from '@oan/projection';
import type { OanEventEnvelope } from '@oan/protocol';

/**
 * The server emits `oan:event`, one envelope argument, and to sockets that opted in (handshake
 * `auth.runtimes: true`) `runtime_jobs`, the runtimes extension's wake-up; clients emit nothing.
 */
export interface ServerToClientEvents {
  'oan:event': (envelope: OanEventEnvelope) => void;
  runtime_jobs: (wake: RuntimeJobsWake) => void;
}
export type ClientToServerEvents = Record<string, never>;
export type InterServerEvents = Record<string, never>;

export interface SocketData {
  accountId: string;
  /** The API key that authenticated the socket, null for an OAN JWT (so revoking a key cuts its sockets). */
  apiKeyId: string | null;
  /** When its credential expires (epoch ms): an OAN JWT's `exp`; null for an API key (revoked instead). */
  expiresAt?: number | null;
  /** Highest seq the socket has (max(seq) at the handshake, then each emit); set by the middleware. */
  lastSeq?: bigint;
}

export type OanSocket = Socket<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;
export type OanNamespace = Namespace<
  ClientToServerEvents,
  ServerToClientEvents,
  InterServerEvents,
  SocketData
>;
