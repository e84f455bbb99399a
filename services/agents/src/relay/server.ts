import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { clientKey, clientOf, type TrustedProxies } from '@oan/http';
import { MAX_FRAME_BYTES, MAX_PENDING_SOCKETS } from '../domain/limits.ts';
import { FIRST_FRAME_MS } from '../domain/limits.ts';
import { serveAgent } from './agentSocket.ts';
import { serveClient } from './clientSocket.ts';
import type { Directory } from './directory.ts';
import type { Hub } from './hub.ts';
import { serveLookup } from './lookupSocket.ts';

/** The relay's socket paths: the clients' and the seed relay's. */
const ROLES: Record<string, 'agent' | 'client' | 'lookup'> = {
  '/ws/announce': 'agent',
  '/announce': 'agent',
  '/ws/input': 'client',
  '/ws/lookup': 'lookup',
  '/lookup': 'lookup',
};

/**
 * The client's address, as the HTTP lookups see it: the peer, or from a trusted edge the hop it
 * wrote (never a hop the client wrote before it); an IPv6 client by its /64.
 */
const clientIp = (req: IncomingMessage, trusted: TrustedProxies) =>
  clientKey(clientOf(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], trusted));

/**
 * Whom the per-client limits count a socket against: the client, except for a trusted peer that
 * forwarded nobody (no X-Forwarded-For: the edge always writes one), which is a process of the fleet
 * reaching the replica directly (the gofers service's relay host, announcing every published Gofer).
 */
const countedClient = (req: IncomingMessage, trusted: TrustedProxies): string | null =>
  trusted(req.socket.remoteAddress ?? '') && !req.headers['x-forwarded-for'] ? null : clientIp(req, trusted);

/**
 * Serves the relay's WebSockets on the HTTP server. Frames are limited to 1 MiB (larger ones close
 * the socket with 1009); a socket that sends no frame within 10 s is closed, and at most
 * MAX_PENDING_SOCKETS may wait for their first frame (a flood of half-open sockets). No protocol
 * pings: the clients disable them (seed 001, Cloudflare) and liveness is any frame.
 */
export function attachRelaySockets(
  server: Server,
  hub: Hub,
  directory: Directory,
  trusted: TrustedProxies,
): () => void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  let pending = 0;
  let n = 0;
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0]!.replace(/\/+$/, '');
    const role = ROLES[path];
    if (!role || pending >= MAX_PENDING_SOCKETS) {
      socket.end(role ? 'HTTP/1.1 503 Service Unavailable\r\n\r\n' : 'HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    const client = countedClient(req, trusted);
    socket.on('error', () => undefined); // a peer gone while its count is read
    // Counted before the upgrade (one Redis round trip), so a flood of sockets costs no WebSocket.
    void hub.clientAllows('sockets', client).then(
      (ok) => {
        if (ok) upgrade(req, socket, head, role, client);
        else socket.end('HTTP/1.1 429 Too Many Requests\r\nRetry-After: 60\r\n\r\n');
      },
      () => socket.end('HTTP/1.1 503 Service Unavailable\r\n\r\n'),
    );
  };
  const upgrade = (
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    role: 'agent' | 'client' | 'lookup',
    client: string | null,
  ) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      const id = `${hub.me}.${++n}`;
      pending++;
      let waiting = true;
      const settle = () => {
        if (waiting) pending--;
        waiting = false;
        clearTimeout(timer);
      };
      const timer = setTimeout(() => {
        if (waiting) ws.terminate();
      }, FIRST_FRAME_MS);
      ws.once('message', settle);
      ws.once('close', settle);
      if (role === 'agent') serveAgent(hub, ws, id, client);
      else if (role === 'client') serveClient(hub, ws, id, client);
      else serveLookup(hub, directory, ws, clientIp(req, trusted));
    });
  };
  server.on('upgrade', onUpgrade);
  return () => {
    server.off('upgrade', onUpgrade);
    wss.close();
  };
}
