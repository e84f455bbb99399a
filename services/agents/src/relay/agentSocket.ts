import type WebSocket from 'ws';
import { announceContent, parseAnnounce } from '../domain/announce.ts';
import { errorFrame, LIMITS } from '../domain/limits.ts';
import { digestOf } from '../infra/registry.ts';
import { verifyBy } from '../infra/signature.ts';
import type { AgentLink, Hub } from './hub.ts';
import { frameText, parseFrame, serially } from './frames.ts';

/**
 * An agent's /ws/announce socket. The first valid ANNOUNCE binds the socket to its address
 * (a socket speaks for one agent: a later ANNOUNCE of another address is refused); every frame counts
 * as liveness; any other frame is the agent's answer in a client session, routed by its session_id.
 * `client` is the address the socket came from (null: a process of the fleet), whose recorded
 * ANNOUNCEs are counted whatever agent addresses it uses.
 */
export function serveAgent(hub: Hub, ws: WebSocket, conn: string, client: string | null): void {
  const link: AgentLink = { conn, ws, sessions: new Map(), lastFrameAt: Date.now(), departReason: 'closed' };
  hub.agents.set(conn, link);
  let content: string | undefined;
  // A frame that failed for a reason of ours (the store, Redis) leaves the agent unsure what holds: the
  // socket is closed as an internal error (1011), and the agent reconnects and announces afresh.
  const run = serially((err) => {
    hub.logger.warn({ err, conn }, 'agent frame failed; closing its socket');
    if (ws.readyState === ws.OPEN) ws.close(1011, 'internal error');
  });

  const announce = async (msg: Record<string, unknown>) => {
    const parsed = parseAnnounce(msg, Math.floor(Date.now() / 1000));
    if (!parsed.ok) return ws.send(errorFrame(parsed.error, 'ANNOUNCE'));
    const a = parsed.value;
    if (link.address && link.address !== a.address) {
      return ws.send(errorFrame('This connection announced another address', 'ANNOUNCE'));
    }
    if (!verifyBy(a.address, a.signed, a.signature))
      return ws.send(errorFrame('Invalid signature', 'ANNOUNCE'));
    const first = !link.address;
    const limit = first ? LIMITS.announceSocket : LIMITS.announce;
    const limited = !(await hub.registry.allow(first ? 'announce-socket' : 'announce', a.address, limit));
    const refuseLimited = () =>
      ws.send(
        errorFrame(`Rate limited: at most ${limit.max} ANNOUNCE per ${limit.windowMs / 1000} s`, 'ANNOUNCE'),
      );
    if (limited && first) return refuseLimited();
    // A new socket of an agent still online, saying what the log already holds (a reconnect, a
    // second host of one key) records nothing: only a first or a changed announcement is appended.
    const now = announceContent(a);
    let unchanged: { conn: string } | undefined;
    if (first) {
      const [owner, recorded] = await Promise.all([
        hub.registry.owner(a.address),
        hub.registry.recorded(a.address),
      ]);
      if (owner && recorded?.digest === digestOf(now)) unchanged = recorded;
    }
    const records = first ? !unchanged : now !== content;
    const clientLimited = records && !(await hub.clientAllows('announces', client));
    const refuseClient = () =>
      ws.send(
        errorFrame(
          `Rate limited: at most ${hub.perClient.announces} new or changed ANNOUNCE per minute from one client`,
          'ANNOUNCE',
        ),
      );
    if (clientLimited && first) return refuseClient();
    // Records the timestamp even for a re-announce over the limit: no verified frame can be replayed.
    const claim = await hub.registry.claim(a.address, conn, a.timestamp);
    if (!claim.ok)
      return ws.send(errorFrame('Replayed ANNOUNCE: timestamp not newer than the last', 'ANNOUNCE'));
    if (limited) return refuseLimited();
    if (clientLimited) return refuseClient();
    if (ws.readyState !== ws.OPEN) {
      // Closed while verifying: the close handler ran before the address was bound; undo the claim.
      await hub.registry.release(a.address, { replica: hub.me, conn });
      return;
    }
    link.address = a.address;
    await hub.replaced(a.address, claim.previous, link);
    // It departed between the look and the claim: its return must be recorded after all.
    if (unchanged && !claim.previous) unchanged = undefined;
    if (unchanged) {
      content = now;
      link.recordedConn = unchanged.conn;
      await hub.registry.keepRecord(a.address);
    } else if (first || now !== content) {
      content = now;
      await hub.log.announced({
        address: a.address,
        summary: a.summary,
        endpoints: a.endpoints,
        profile: a.profile ? JSON.stringify(a.profile) : null,
        timestamp: a.timestamp,
        connectionId: conn,
        announcedAt: new Date().toISOString(),
      });
      await hub.registry.record(a.address, conn, now);
      link.recordedConn = conn;
    } else {
      // A heartbeat: what the log holds stays remembered while the agent is online.
      await hub.registry.keepRecord(a.address);
    }
    ws.send('{"type":"ANNOUNCE_OK"}');
  };

  ws.on('message', (data) => {
    link.lastFrameAt = Date.now();
    run(async () => {
      const text = frameText(data);
      const msg = parseFrame(text);
      if (!msg) return ws.send(errorFrame('Invalid JSON: expected an object'));
      if (msg.type === 'ANNOUNCE') return announce(msg);
      if (!link.address)
        return ws.send(
          errorFrame('ANNOUNCE first', typeof msg.type === 'string' ? msg.type.slice(0, 64) : undefined),
        );
      const sid = msg.session_id;
      // An agent's ERROR about a session is the client's (forwarded verbatim, e.g. a refused
      // CONNECT or a rate limit); one without a session answers the relay and goes nowhere.
      if (msg.type === 'ANNOUNCE_OK' || (msg.type === 'ERROR' && typeof sid !== 'string')) return;
      // An agent frame without a session belongs to nobody (never another session's client).
      if (typeof sid !== 'string' || sid.length === 0) return;
      await hub.fromAgent(link, sid, text);
    });
  });
  ws.on('close', () => run(() => hub.agentClosed(link)));
  ws.on('error', () => undefined);
}
