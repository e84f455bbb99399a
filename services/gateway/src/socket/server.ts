import { randomBytes } from 'node:crypto';
import type { Server as HttpServer } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { Server } from 'socket.io';
import { authenticateSocketToken, type Authenticator } from '@oan/auth';
import { findOutdatedConnector, OAN_WS_NAMESPACE, WS_ROOM_PREFIX } from '@oan/protocol';
import type { NotifyOutdated } from '../infra/connectorNotices.ts';
import type { Delivery } from './delivery.ts';
import type { RuntimeWakeRelay } from './runtimeWakes.ts';
import type {
  ClientToServerEvents,
  InterServerEvents,
  OanSocket,
  ServerToClientEvents,
  SocketData,
} from './types.ts';

export interface SocketServerDeps {
  server: HttpServer;
  gatewayId: string;
  openApi: boolean;
  authenticator: Authenticator;
  delivery: Delivery;
  /** Relays runtime wake-ups to the sockets that opted in. */
  runtimeWakes: RuntimeWakeRelay;
  notifyOutdated: NotifyOutdated;
  /** The connector release registry: latest release per connector package (the gateway's OAN_CONNECTOR_RELEASES). */
  connectorReleases: Readonly<Record<string, string>>;
  log: FastifyBaseLogger;
  /** Default HANDSHAKE_TIMEOUT_MS. */
  handshakeTimeoutMs?: number;
}

export type OanServer = Server<ClientToServerEvents, ServerToClientEvents, InterServerEvents, SocketData>;

/** The largest frame a client may send; the handshake payload is well under 1 KB. */
export const MAX_CLIENT_FRAME_BYTES = 16 * 1024;
/** How long an engine connection may stay without joining a namespace. */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
/** The longest delay setTimeout takes (2^31 - 1 ms); a longer one would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Texts the engine's connection supervisor classifies as terminal (credentials dead, stop
 * reconnecting); anything else must not look terminal, or a mere outage would stop it for good.
 */
const TERMINAL = /^(Unauthorized|Forbidden)\b/;

export function createSocketServer(deps: SocketServerDeps): OanServer {
  // Default path; both transports (the SDK is websocket-only, browsers poll then upgrade).
  const io: OanServer = new Server(deps.server, {
    path: '/socket.io/',
    transports: ['polling', 'websocket'],
    serveClient: false,
    // Clients send nothing but the handshake (a token and a short client declaration): a
    // frame or polling body above this closes the connection before it is parsed (default 1 MB).
    maxHttpBufferSize: MAX_CLIENT_FRAME_BYTES,
    // A connection that never joins a namespace is dropped after this (default 45 s): a flood of
    // half-open handshakes cannot hold sockets for long.
    connectTimeout: deps.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS,
  });
  // The edge routes a polling request to the gateway that minted its sid (`<GATEWAY_ID>.<random>`).
  // base64url never contains '.', so the first '.' always ends the prefix.
  io.engine.generateId = () => `${deps.gatewayId}.${randomBytes(15).toString('base64url')}`;

  // Nothing is served on the main namespace; answer as if it did not exist.
  io.use((_socket, next) => next(new Error('Invalid namespace')));

  // With the gate (ENABLE_OPEN_API) off /oan is never registered, so clients get "Invalid namespace".
  if (!deps.openApi) return io;

  const oan = io.of(OAN_WS_NAMESPACE);

  // Rejection = an Error to the callback, which reaches the client as connect_error.
  oan.use(async (socket, next) => {
    let principal;
    try {
      // Steps 1-4 (missing, unknown or revoked key, bad JWT or realm, banned) in @oan/auth.
      principal = await authenticateSocketToken(deps.authenticator, socket.handshake.auth?.token);
    } catch (err) {
      const message = err instanceof Error ? err.message : '';
      if (TERMINAL.test(message)) return next(new Error(message));
      return unavailable(err, next);
    }
    try {
      socket.data.accountId = principal.accountId;
      socket.data.apiKeyId = principal.via === 'apiKey' ? principal.apiKeyId : null;
      socket.data.expiresAt = principal.via === 'jwt' ? principal.expiresAt : null;
      socket.data.lastSeq = await deps.delivery.startingSeq(principal.accountId);
      next();
    } catch (err) {
      unavailable(err, next);
    }
  });

  oan.on('connection', (socket) => {
    // The room every event of the account goes to.
    void socket.join(`${WS_ROOM_PREFIX}${socket.data.accountId}`);
    deps.delivery.add(socket);
    deps.runtimeWakes.add(socket);
    void recheckBan(socket);
    cutAtExpiry(socket);
    // An invalid connector declaration (name/version out of bounds) is treated as undeclared, never a rejection.
    const outdated = findOutdatedConnector(socket.handshake.auth?.client, deps.connectorReleases);
    if (outdated) deps.notifyOutdated(socket.data.accountId, outdated);
    // Clients emit nothing; whatever they send is ignored (no listeners are registered).
  });
  return io;

  /**
   * A ban cuts every socket after its notice. A handshake that passed the ban check just before
   * the ban committed, and read its starting seq after the notice was stored, would never be sent
   * the notice (it lies at or below its cursor) and so never be cut. The ban commits before its
   * notice exists, so checking again once the socket is registered closes that window: either this
   * check sees the ban, or the notice comes later and is delivered (then cuts) as for any socket.
   * The client backfills the notice on its manual reconnect attempt, which is refused.
   */
  async function recheckBan(socket: OanSocket): Promise<void> {
    try {
      await authenticateSocketToken(deps.authenticator, socket.handshake.auth?.token);
    } catch (err) {
      const message = err instanceof Error ? err.message : '';
      if (TERMINAL.test(message) && socket.connected) socket.disconnect(true);
      // A dependency failure here changes nothing: the socket passed the handshake.
    }
  }

  /**
   * A socket lives no longer than the token that opened it: at the JWT's `exp` the server cuts it
   * (`io server disconnect`), and the reconnect with that token is refused. A timer cannot run
   * longer than about 24.8 days, so a later expiry is waited for in steps.
   */
  function cutAtExpiry(socket: OanSocket): void {
    const expiresAt = socket.data.expiresAt;
    if (expiresAt === null || expiresAt === undefined) return;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      const left = expiresAt - Date.now();
      if (left <= 0) {
        if (socket.connected) socket.disconnect(true);
        return;
      }
      timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      timer.unref();
    };
    socket.once('disconnect', () => clearTimeout(timer));
    arm();
  }

  // A dependency failure is not the client's fault: a non-terminal text so connectors retry.
  function unavailable(err: unknown, next: (err?: Error) => void): void {
    deps.log.error({ err }, 'socket handshake failed');
    next(new Error('Service unavailable, retry later'));
  }
}
