import type { Namespace, Socket } from 'socket.io';
import type { OanEventEnvelope } from '@oan/protocol';

/** The server emits only `oan:event`, one envelope argument; clients emit nothing. */
export interface ServerToClientEvents {
  'oan:event': (envelope: OanEventEnvelope) => void;
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
