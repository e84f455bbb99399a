import type { Logger } from '@oan/http';
import type WebSocket from 'ws';
import { errorFrame, MAX_BUFFERED_BYTES, NOT_FOUND, type PerClientLimits } from '../domain/limits.ts';
import type { Bus, BusMessage } from '../infra/bus.ts';
import type { AgentLog } from '../infra/events.ts';
import type { Owner, Registry } from '../infra/registry.ts';
import { parseFrame } from './frames.ts';

/** An agent's announce socket on this replica. */
export interface AgentLink {
  conn: string;
  ws: WebSocket;
  address?: string;
  /** Client sessions seen on this socket → the replica holding the client. */
  sessions: Map<string, string>;
  lastFrameAt: number;
  departReason: 'closed' | 'stale';
  /** The socket the read model's row names (the last recorded announcement): departures name it. */
  recordedConn?: string;
}

/** A client's /ws/input socket on this replica, bound to one agent and one session. */
export interface ClientLink {
  id: string;
  ws: WebSocket;
  address: string;
  sid: string;
  /** An INPUT or CONNECT went to the agent and its OUTPUT, CONNECTED or ERROR has not come back. */
  awaiting?: boolean;
  /** The agent answered a CONNECT on this socket. */
  connected?: boolean;
}

/** The agent frames that answer a client's turn (INPUT → OUTPUT, CONNECT → CONNECTED) or refuse it. */
const ANSWERS: ReadonlySet<unknown> = new Set(['OUTPUT', 'CONNECTED', 'ERROR']);

const REPLICA_TTL_MS = 6_000;

/**
 * A peer that does not read (its frames pile up in this process) is cut off with 1013 rather than
 * let one slow or hostile socket hold the replica's memory.
 */
function sendOrShed(ws: WebSocket, frame: string): void {
  if (ws.bufferedAmount > MAX_BUFFERED_BYTES) ws.close(1013, 'not reading its frames');
  else ws.send(frame);
}

/**
 * This replica's sockets and the routing between them and the other replicas (docs/agent-relay.md):
 * a client frame goes to the replica the routing table names for its agent, an agent frame to the
 * replica holding its session's client. Frames are passed as text; nothing of their content is logged.
 */
export class Hub {
  readonly agents = new Map<string, AgentLink>();
  /** The current socket per address on this replica. */
  readonly byAddress = new Map<string, AgentLink>();
  readonly clients = new Map<string, ClientLink>();
  private timers: NodeJS.Timeout[] = [];
  private stopping = false;

  readonly registry: Registry;
  private readonly bus: Bus;
  readonly log: AgentLog;
  readonly logger: Logger;
  readonly staleMs: number;
  readonly perClient: PerClientLimits;
  constructor(
    registry: Registry,
    bus: Bus,
    log: AgentLog,
    logger: Logger,
    staleMs: number,
    perClient: PerClientLimits,
  ) {
    this.registry = registry;
    this.bus = bus;
    this.log = log;
    this.logger = logger;
    this.staleMs = staleMs;
    this.perClient = perClient;
  }

  /**
   * One more of `kind` for a client address within its per-minute limit (null: a socket of the
   * fleet itself, not counted).
   */
  async clientAllows(kind: keyof PerClientLimits, client: string | null): Promise<boolean> {
    if (client === null) return true;
    return this.registry.allow(`client-${kind}`, client, { max: this.perClient[kind], windowMs: 60_000 });
  }

  get me(): string {
    return this.registry.replicaId;
  }

  async start(): Promise<void> {
    await this.registry.heartbeat(REPLICA_TTL_MS);
    await this.bus.start(
      this.me,
      (m) => this.onBus(m),
      () => this.busGap(),
    );
    const every = (ms: number, fn: () => Promise<void>) => {
      const t = setInterval(
        () => void fn().catch((err) => this.logger.warn({ err }, 'relay timer failed')),
        ms,
      );
      t.unref();
      this.timers.push(t);
    };
    every(2_000, async () => {
      await this.registry.heartbeat(REPLICA_TTL_MS);
      await this.bus.ensureListening(this.me);
    });
    every(2_000, () => this.sweep());
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    // The others see this replica gone at once and depart the agents that do not come back elsewhere.
    await this.registry.retire();
    // Going away (1001): agents reconnect to another replica at once, clients see their socket end.
    for (const l of this.agents.values()) l.ws.close(1001, 'relay restarting');
    for (const c of this.clients.values()) c.ws.close(1001, 'relay restarting');
    await this.bus.close();
  }

  private clientKey = (address: string, sid: string) => `${address}|${sid}`;

  /** A client frame (session_id already written in) towards the agent, wherever its socket is. */
  async toAgent(address: string, sid: string, frame: string): Promise<void> {
    const owner = await this.registry.owner(address);
    if (!owner) return this.notFound(address, sid);
    if (owner.replica === this.me) this.deliverToAgent(address, sid, frame, this.me);
    else if (!(await this.bus.send(owner.replica, { kind: 'a', address, sid, origin: this.me, frame })))
      this.notFound(address, sid);
  }

  /** An agent frame towards the client of its session. */
  async fromAgent(link: AgentLink, sid: string, frame: string): Promise<void> {
    const address = link.address!;
    let holder = link.sessions.get(sid);
    if (!holder) {
      // A session begun before this socket (the agent reconnected here): ask the routing table.
      holder = await this.registry.sessionReplica(address, sid);
      if (!holder) return;
      link.sessions.set(sid, holder);
    }
    if (holder === this.me) this.toClient(address, sid, frame);
    else await this.bus.send(holder, { kind: 'c', address, sid, origin: this.me, frame });
  }

  private deliverToAgent(address: string, sid: string, frame: string, origin: string): void {
    const link = this.byAddress.get(address);
    if (!link) {
      // The routing table named this replica, but the agent's socket is gone (or never was) here.
      this.logger.warn({ address, origin }, 'relay frame for an agent not on this replica');
      if (origin === this.me) this.notFound(address, sid);
      else
        void this.bus
          .send(origin, { kind: 'g', address, sid, origin: this.me, frame: '' })
          .catch(() => undefined);
      return;
    }
    link.sessions.set(sid, origin);
    sendOrShed(link.ws, frame);
  }

  private toClient(address: string, sid: string, frame: string): void {
    const client = this.clients.get(this.clientKey(address, sid));
    if (!client) return;
    if (client.awaiting) {
      const type = parseFrame(frame)?.type;
      if (ANSWERS.has(type)) client.awaiting = false;
      if (type === 'CONNECTED') client.connected = true;
    }
    sendOrShed(client.ws, frame);
  }

  /**
   * The client's frame reached no socket of its agent. A client still waiting for its first
   * CONNECTED gets the error and its socket closes, as a CONNECT to an unknown agent does: the clients
   * ignore an ERROR while they wait for CONNECTED and would otherwise sit out their own timeout.
   */
  private notFound(address: string, sid: string, onlyAwaiting = false): void {
    const client = this.clients.get(this.clientKey(address, sid));
    if (!client || (onlyAwaiting && !client.awaiting)) return;
    this.toClient(address, sid, errorFrame(NOT_FOUND));
    if (!client.connected) client.ws.close(1008, NOT_FOUND);
  }

  /** The agent's socket of this session closed: a turn it had not answered never will be. */
  private agentGone(address: string, sid: string): void {
    this.notFound(address, sid, true);
  }

  /**
   * Frames for this replica may have been lost (its bus connection dropped, or its subscription):
   * a client turn still unanswered may never be, so it fails now rather than at the client's timeout.
   */
  private busGap(): void {
    const waiting = [...this.clients.values()].filter((c) => c.awaiting);
    this.logger.warn({ waiting: waiting.length }, 'relay bus frames may have been lost');
    for (const c of waiting) this.notFound(c.address, c.sid, true);
  }

  addClient(c: ClientLink): void {
    this.clients.set(this.clientKey(c.address, c.sid), c);
  }

  removeClient(c: ClientLink): void {
    const key = this.clientKey(c.address, c.sid);
    if (this.clients.get(key) === c) this.clients.delete(key);
  }

  private onBus(m: BusMessage): void {
    if (m.kind === 'a') this.deliverToAgent(m.address, m.sid, m.frame, m.origin);
    else if (m.kind === 'c') this.toClient(m.address, m.sid, m.frame);
    else if (m.kind === 'x') this.dropReplaced(m.address, m.sid);
    else if (m.kind === 'g') this.agentGone(m.address, m.sid);
  }

  /** The agent's socket `conn` on this replica was replaced by a newer one (possibly elsewhere). */
  dropReplaced(address: string, conn: string): void {
    const link = this.agents.get(conn);
    if (!link || link.address !== address) return;
    if (this.byAddress.get(address) === link) this.byAddress.delete(address);
    link.ws.close(4000, 'replaced by a newer connection');
  }

  /** A newer announcement of `address` on this replica: the previous socket, wherever it is, goes. */
  async replaced(address: string, previous: Owner | undefined, current: AgentLink): Promise<void> {
    const old = this.byAddress.get(address);
    this.byAddress.set(address, current);
    if (old && old !== current) this.dropReplaced(address, old.conn);
    if (previous && previous.replica !== this.me && previous.conn !== current.conn) {
      await this.bus.send(previous.replica, {
        kind: 'x',
        address,
        sid: previous.conn,
        origin: this.me,
        frame: '',
      });
    }
  }

  /** The socket closed: if it still owned the address, the agent departs (an event on the log). */
  async agentClosed(link: AgentLink): Promise<void> {
    this.agents.delete(link.conn);
    const address = link.address;
    if (!address || this.stopping) return;
    if (this.byAddress.get(address) === link) this.byAddress.delete(address);
    // Its sessions' unanswered turns fail now rather than wait out the client's own timeout.
    for (const [sid, holder] of link.sessions) {
      if (holder === this.me) this.agentGone(address, sid);
      else
        void this.bus
          .send(holder, { kind: 'g', address, sid, origin: this.me, frame: '' })
          .catch(() => undefined);
    }
    if (await this.registry.release(address, { replica: this.me, conn: link.conn })) {
      await this.log.departed({
        address,
        connectionId: link.recordedConn ?? link.conn,
        reason: link.departReason,
        departedAt: new Date().toISOString(),
      });
    }
  }

  /**
   * Liveness: a socket without any frame for `staleMs` is closed here; an agent
   * whose replica died (its heartbeat key lapsed) departs by whichever replica sees it first.
   */
  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const link of this.agents.values()) {
      if (now - link.lastFrameAt > this.staleMs) {
        link.departReason = 'stale';
        link.ws.close(4008, 'no frame for too long');
      }
    }
    const owners = await this.registry.owners();
    const alive = new Map<string, boolean>([[this.me, true]]);
    for (const replica of new Set([...owners.values()].map((o) => o.replica))) {
      if (!alive.has(replica)) alive.set(replica, await this.registry.replicaAlive(replica));
    }
    // Every agent of a dead replica at once: a lookup must not answer a stale endpoint for long.
    const lost = [...owners].filter(([, o]) => !alive.get(o.replica));
    await Promise.all(
      lost.map(async ([address, owner]) => {
        if (!(await this.registry.release(address, owner))) return;
        const recorded = await this.registry.recorded(address);
        await this.log
          .departed({
            address,
            connectionId: recorded?.conn ?? owner.conn,
            reason: 'replica_lost',
            departedAt: new Date().toISOString(),
          })
          .catch((err: unknown) => this.logger.warn({ err, address }, 'departure not recorded'));
      }),
    );
  }
}
