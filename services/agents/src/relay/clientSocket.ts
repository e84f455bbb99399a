import { randomUUID } from 'node:crypto';
import type WebSocket from 'ws';
import { ADDRESS } from '../domain/announce.ts';
import { errorFrame, NOT_FOUND, SESSION_ID } from '../domain/limits.ts';
import { frameText, parseFrame, serially } from './frames.ts';
import type { ClientLink, Hub } from './hub.ts';

/**
 * A client's /ws/input socket: the first frame's `to` picks the agent; the relay keeps the
 * client's session_id or mints one, writes it into every frame it forwards, and tells the agent
 * `close` when the client leaves. The socket stays bound to that agent and session. The frames of
 * all the sockets of one client address (null: a process of the fleet) are counted per minute.
 */
export function serveClient(hub: Hub, ws: WebSocket, id: string, client: string | null): void {
  let link: ClientLink | undefined;
  let ending = false;
  const run = serially((err) => hub.logger.warn({ err, id }, 'client frame failed'));
  const refuse = (message: string) => {
    ending = true;
    ws.send(errorFrame(message));
    ws.close(1008, message.slice(0, 100));
  };

  const open = async (msg: Record<string, unknown>) => {
    const to = msg.to;
    if (typeof to !== 'string' || !ADDRESS.test(to)) return refuse(NOT_FOUND);
    if (!(await hub.registry.owner(to))) return refuse(NOT_FOUND);
    const given = msg.session_id;
    if (given !== undefined && given !== null && (typeof given !== 'string' || !SESSION_ID.test(given))) {
      return refuse('Invalid session_id');
    }
    const sid = typeof given === 'string' ? given : randomUUID();
    if (!(await hub.registry.bindSession(to, sid, id))) return refuse('Session in use by another connection');
    if (ws.readyState !== ws.OPEN) return hub.registry.unbindSession(to, sid, id);
    link = { id, ws, address: to, sid };
    hub.addClient(link);
  };

  ws.on('message', (data) => {
    run(async () => {
      if (ending) return;
      const text = frameText(data);
      const msg = parseFrame(text);
      if (!msg) return ws.send(errorFrame('Invalid JSON: expected an object'));
      if (!(await hub.clientAllows('clientFrames', client)))
        return ws.send(
          errorFrame(`Rate limited: at most ${hub.perClient.clientFrames} frames per minute from one client`),
        );
      if (!link) await open(msg);
      if (!link) return;
      msg.session_id = link.sid;
      // Which client socket sent it, written over whatever the client put there: an agent can tie
      // a session to the socket that signed its CONNECT, so a later socket that reuses the session
      // id (once the first is gone and its `close` was lost) is not taken for the verified caller.
      msg.relay_connection = link.id;
      if (msg.type === 'INPUT' || msg.type === 'CONNECT') link.awaiting = true;
      await hub.toAgent(link.address, link.sid, JSON.stringify(msg));
    });
  });
  ws.on('close', () =>
    run(async () => {
      ending = true;
      if (!link) return;
      hub.removeClient(link);
      const close = JSON.stringify({ type: 'close', session_id: link.sid });
      await hub.toAgent(link.address, link.sid, close).catch(() => undefined);
      await hub.registry.unbindSession(link.address, link.sid, link.id);
    }),
  );
  ws.on('error', () => undefined);
}
