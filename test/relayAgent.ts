import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import WebSocket from 'ws';

/** Python's `json.dumps(v, sort_keys=True)` for the ASCII-only values this agent signs (signed payloads). */
const pyDumps = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(pyDumps).join(', ')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}: ${pyDumps(o[k])}`)
      .join(', ')}}`;
  }
  return JSON.stringify(v ?? null);
};

/**
 * A ConnectOnion agent as the Python `host()` speaks to a relay (the announce socket, and
 * the CONNECT / INPUT / OUTPUT / PING subset of client routing), hosted by the tests: it announces, answers
 * CONNECT with CONNECTED and each INPUT with an OUTPUT `echo: <prompt> (turn n)`, counts turns per
 * session, records `close` frames, and reconnects 1 s after its socket drops (a fresh ANNOUNCE).
 */
export class RelayAgent {
  readonly address: string;
  private readonly key: KeyObject;
  ws?: WebSocket;
  readonly turns = new Map<string, number>();
  readonly closed: string[] = [];
  readonly errors: string[] = [];
  /** host() sends a PING per session every 30 s; this one sends one before each OUTPUT (false: none). */
  pingOnInput = true;
  /** Closes its socket on the next INPUT instead of answering it (an agent gone mid-turn). */
  leaveOnInput = false;
  announcedOk = 0;
  /** The last ANNOUNCE sent on connecting (a replay test sends it again). */
  lastAnnounce?: Record<string, unknown>;
  connections = 0;
  private lastTs = 0;
  private stopped = false;
  private relayUrl: string;

  readonly summary;
  constructor(relayUrl: string, summary = 'echo agent') {
    this.summary = summary;
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    this.key = privateKey;
    const x = publicKey.export({ format: 'jwk' }).x!;
    this.address = `0x${Buffer.from(x, 'base64url').toString('hex')}`;
    this.relayUrl = relayUrl.replace(/\/+$/, '');
  }

  /** Points later reconnects at another relay URL (e.g. the surviving replica). */
  retarget(relayUrl: string): void {
    this.relayUrl = relayUrl.replace(/\/+$/, '');
  }

  announceFrame(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    // Strictly newer than the last one (the relay refuses a timestamp it has seen: replay).
    const ts = Math.max(Math.floor(Date.now() / 1000), this.lastTs + 1);
    this.lastTs = ts;
    const msg = {
      type: 'ANNOUNCE',
      address: this.address,
      timestamp: ts,
      summary: this.summary,
      endpoints: [],
      relay: this.relayUrl,
      ...overrides,
    };
    return { ...msg, signature: sign(null, Buffer.from(pyDumps(msg)), this.key).toString('hex') };
  }

  /** Connects and announces; resolves on the relay's ANNOUNCE_OK. */
  start(): Promise<void> {
    this.stopped = false;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`${this.relayUrl}/ws/announce`);
      this.ws = ws;
      ws.on('open', () => {
        this.connections++;
        this.lastAnnounce = this.announceFrame();
        ws.send(JSON.stringify(this.lastAnnounce));
      });
      ws.on('message', (data) => {
        const msg = JSON.parse((data as Buffer).toString()) as Record<string, unknown>;
        if (msg.type === 'ANNOUNCE_OK') {
          this.announcedOk++;
          resolve();
          return;
        }
        if (msg.type === 'ERROR') {
          this.errors.push(String(msg.error));
          return;
        }
        this.onSessionFrame(ws, msg);
      });
      ws.on('error', (err) => reject(err));
      ws.on('close', () => {
        if (this.ws !== ws || this.stopped) return;
        setTimeout(() => void this.start().catch(() => this.reconnectLater()), 1000);
      });
    });
  }

  private reconnectLater(): void {
    if (!this.stopped) setTimeout(() => void this.start().catch(() => this.reconnectLater()), 1000);
  }

  private onSessionFrame(ws: WebSocket, msg: Record<string, unknown>): void {
    // host()'s serve_loop: every frame but ERROR / ANNOUNCE_OK carries the relay's session_id.
    const sid = msg.session_id;
    if (typeof sid !== 'string') throw new Error(`frame without session_id: ${String(msg.type)}`);
    const send = (frame: Record<string, unknown>) => ws.send(JSON.stringify({ ...frame, session_id: sid }));
    if (msg.type === 'CONNECT') {
      const known = this.turns.has(sid);
      if (!known) this.turns.set(sid, 0);
      send({
        type: 'CONNECTED',
        status: known ? 'connected' : 'new',
        protocol: {
          name: 'oip',
          version: '0.1',
          min_version: '0.1',
          max_version: '0.1',
          websocket_path: '/ws',
        },
      });
    } else if (msg.type === 'INPUT' && this.leaveOnInput) {
      this.stop();
    } else if (msg.type === 'INPUT') {
      const n = (this.turns.get(sid) ?? 0) + 1;
      this.turns.set(sid, n);
      if (this.pingOnInput) send({ type: 'PING' });
      send({
        type: 'OUTPUT',
        result: `echo: ${String(msg.prompt)} (turn ${n})`,
        duration_ms: 1,
        session: { session_id: sid },
      });
    } else if (msg.type === 'close') {
      this.closed.push(sid);
    }
  }

  /** Sends a raw frame on the announce socket (hostile-input tests). */
  send(frame: unknown): void {
    this.ws?.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  stop(): void {
    this.stopped = true;
    this.ws?.close();
  }
}
