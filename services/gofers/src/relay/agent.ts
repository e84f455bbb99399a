/* eslint-disable max-lines -- Longer than most modules on purpose: one published Gofer's side of
 * the ConnectOnion relay (its announce socket, reconnects, CONNECT verification with replay
 * refusal, and the INPUT/OUTPUT turns) is one state machine over one socket; split, each part would
 * need the others' state.
 */
import type { KeyObject } from 'node:crypto';
import type { Logger } from '@oan/http';
import { ANNOUNCE_STYLE, canonicalJson, COMMAND_STYLE } from '@oan/protocol';
import WebSocket from 'ws';
import { addressOf, ADDRESS, signText, verifiedBy } from './keys.ts';

/** The peers' frame limit (the websockets default, 1 MiB): nothing larger is sent or accepted. */
const MAX_FRAME_BYTES = 1024 * 1024;
/** A caller's message longer than this is refused (the brain's input, and the role-chat row, stay small). */
export const MAX_PROMPT_CHARS = 4000;
/** A CONNECT signed further than this from our clock is refused, and one seen before is a replay. */
const CONNECT_SKEW_S = 300;
/** Sessions kept per Gofer (the oldest go first) and how long an idle one is kept. */
const MAX_SESSIONS = 1000;
const SESSION_IDLE_MS = 30 * 60_000;
/** Turns of one session kept and given to the brain (a long session must not grow without end). */
export const SESSION_TURNS = 20;
/**
 * CONNECT signatures remembered for the replay check. Past this many, those of the earliest signed
 * second are forgotten, and from then on a CONNECT signed no later than that second is refused: it
 * could be a replay of a forgotten one (under a flood, a caller whose clock lags may be refused).
 */
export const MAX_USED_CONNECTS = 10_000;
/** Heartbeat tick: re-announces after 60 s (the relay drops an agent silent for 120 s), PINGs sessions every 25 s (the TS client gives up after 60 s without one). */
const TICK_MS = 5_000;
const REANNOUNCE_MS = 60_000;
/** The relay takes one ANNOUNCE per 10 s on a socket (seed 001): a changed summary waits that long. */
const ANNOUNCE_GAP_MS = 11_000;
const PING_MS = 25_000;
const PROTOCOL = {
  name: 'oip',
  version: '0.1',
  min_version: '0.1',
  max_version: '0.1',
  websocket_path: '/ws',
};

export const NOT_FOUND = 'Agent not found or offline';

export interface CallerTurn {
  caller: string;
  /** This session so far, oldest first. */
  history: { from: 'caller' | 'gofer'; content: string }[];
  prompt: string;
}
export type TurnOutcome = { ok: true; content: string } | { ok: false; error: string };

export interface GoferAgentOptions {
  goferId: string;
  key: KeyObject;
  /** The relay's base URLs (ws(s):// or http(s)://), tried in turn on reconnects. */
  urls: string[];
  summary: string;
  /** Spends one turn of the caller's and the Gofer's budgets: null, or the ERROR to answer. */
  admit: (caller: string) => Promise<string | null>;
  /** Answers one INPUT (the brain, then the role-chat row). */
  answer: (turn: CallerTurn) => Promise<TurnOutcome>;
  logger: Logger;
}

interface Session {
  caller: string;
  /** The relay's id of the client socket whose CONNECT was verified; only its INPUTs count. */
  connection: unknown;
  history: CallerTurn['history'];
  /** One turn after another per session: OUTPUTs keep the order of INPUTs. */
  queue: Promise<void>;
  seenAt: number;
}

const wsBase = (url: string) => url.replace(/^http(s?):\/\//, 'ws$1://').replace(/\/+$/, '');

/**
 * One published Gofer as a ConnectOnion agent (the agent side of the relay protocol, and the
 * CONNECT / INPUT / OUTPUT / PING subset of its client sessions), hosted by the gofers service on the fleet's relay: it announces with a signed
 * ANNOUNCE, re-announces every 60 s and on every reconnect (backoff 1–30 s, the next relay URL each
 * time), verifies each CONNECT (the caller's address is who asked), and answers INPUT with OUTPUT.
 * Frame content is never logged.
 */
export class GoferAgent {
  readonly goferId: string;
  readonly address: string;
  private readonly opts: GoferAgentOptions;
  private summary: string;
  private summaryDirty = false;
  private ws: WebSocket | undefined;
  private announced = false;
  private stopped = true;
  private attempt = 0;
  private urlIndex = 0;
  private lastTs = 0;
  private lastAnnounceAt = 0;
  private lastPingAt = 0;
  private readonly sessions = new Map<string, Session>();
  /** Signatures of CONNECTs accepted in the skew window, by their signed second (a replayed one is refused). */
  private readonly usedConnects = new Map<number, Set<string>>();
  private usedCount = 0;
  /** The latest signed second whose signatures were forgotten: a CONNECT signed no later is refused. */
  private forgottenUpTo = 0;
  private tick: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;

  constructor(opts: GoferAgentOptions) {
    this.opts = opts;
    this.goferId = opts.goferId;
    this.address = addressOf(opts.key);
    this.summary = opts.summary;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.tick = setInterval(() => this.onTick(), TICK_MS);
    this.tick.unref();
    this.connect();
  }

  /** Whether the relay acknowledged this socket's ANNOUNCE. */
  get listed(): boolean {
    return this.announced;
  }

  /** A new summary (the Gofer's name or description changed): announced once the relay allows it. */
  setSummary(summary: string): void {
    if (summary === this.summary) return;
    this.summary = summary;
    this.summaryDirty = true;
  }

  /** Closes the announce socket and resolves once it is closed (the relay then departs the agent). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tick);
    clearTimeout(this.retry);
    this.sessions.clear();
    const ws = this.ws;
    this.ws = undefined;
    this.announced = false;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => {
        ws.terminate();
        resolve();
      }, 3_000);
      ws.once('close', () => {
        clearTimeout(force);
        resolve();
      });
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000, 'unpublished');
    });
  }

  private connect(): void {
    if (this.stopped) return;
    const base = wsBase(this.opts.urls[this.urlIndex % this.opts.urls.length]!);
    const ws = new WebSocket(`${base}/ws/announce`, {
      maxPayload: MAX_FRAME_BYTES,
      perMessageDeflate: false,
    });
    this.ws = ws;
    ws.on('open', () => this.announce(ws));
    ws.on('message', (data) => {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      this.onFrame(ws, bytes.toString('utf8'));
    });
    ws.on('error', () => undefined); // 'close' follows
    ws.on('close', (code) => {
      if (this.ws !== ws) return;
      this.ws = undefined;
      this.announced = false;
      if (this.stopped) return;
      // The next replica, after a backoff that grows while nothing is acknowledged (1, 2, 4 … 30 s).
      this.urlIndex++;
      const delay = Math.min(30_000, 1_000 * 2 ** this.attempt) + Math.floor(Math.random() * 250);
      this.attempt = Math.min(this.attempt + 1, 5);
      this.opts.logger.info({ goferId: this.goferId, code, delay }, 'relay socket closed; reconnecting');
      this.retry = setTimeout(() => this.connect(), delay);
    });
  }

  private send(frame: Record<string, unknown>): void {
    const ws = this.ws;
    if (ws?.readyState !== WebSocket.OPEN) return;
    const text = JSON.stringify(frame);
    if (Buffer.byteLength(text) > MAX_FRAME_BYTES) return; // never more than the peers accept
    ws.send(text);
  }

  /** A signed ANNOUNCE (signed over the canonical JSON, as every agent does): its timestamp strictly newer than the last (the relay refuses replays). */
  private announce(ws: WebSocket): void {
    const ts = Math.max(Math.floor(Date.now() / 1000), this.lastTs + 1);
    this.lastTs = ts;
    const msg = {
      type: 'ANNOUNCE',
      address: this.address,
      timestamp: ts,
      summary: this.summary,
      endpoints: [] as string[],
      relay: null,
    };
    const signature = signText(this.opts.key, canonicalJson(msg, ANNOUNCE_STYLE));
    this.lastAnnounceAt = Date.now();
    this.summaryDirty = false;
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ ...msg, signature }));
  }

  private onTick(): void {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || !this.announced) return;
    const now = Date.now();
    const sinceAnnounce = now - this.lastAnnounceAt;
    if (sinceAnnounce >= REANNOUNCE_MS || (this.summaryDirty && sinceAnnounce >= ANNOUNCE_GAP_MS)) {
      this.announce(ws);
    }
    if (now - this.lastPingAt >= PING_MS) {
      this.lastPingAt = now;
      for (const [sid, s] of this.sessions) {
        if (now - s.seenAt > SESSION_IDLE_MS) this.sessions.delete(sid);
        else this.send({ type: 'PING', session_id: sid });
      }
    }
    for (const [ts, sigs] of this.usedConnects)
      if (now / 1000 - ts > 2 * CONNECT_SKEW_S) this.forget(ts, sigs);
  }

  private onFrame(ws: WebSocket, text: string): void {
    if (this.ws !== ws) return;
    let msg: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return;
      msg = parsed as Record<string, unknown>;
    } catch {
      return;
    }
    const type = msg.type;
    if (type === 'ANNOUNCE_OK') {
      if (!this.announced) this.opts.logger.info({ goferId: this.goferId }, 'listed on the relay');
      this.announced = true;
      this.attempt = 0;
      return;
    }
    if (type === 'ERROR') {
      const error = typeof msg.error === 'string' ? msg.error.slice(0, 200) : 'unknown';
      this.opts.logger.warn({ goferId: this.goferId, error }, 'the relay refused a frame');
      // Refused before it was listed (a replayed timestamp after a restart, a rate limit): start over.
      if (!this.announced) ws.close(1000, 'announce refused');
      return;
    }
    const sid = msg.session_id;
    if (typeof sid !== 'string' || sid === '') return;
    if (type === 'CONNECT') this.onConnect(sid, msg);
    else if (type === 'INPUT') this.onInput(sid, msg);
    else if (type === 'PING') this.send({ type: 'PONG', session_id: sid });
    else if (type === 'close') this.sessions.delete(sid);
    else if (type === 'EXEC') this.refuse(sid, 'EXEC is not supported by this agent');
    // PONG and the rest (SESSION_STATUS, INTERRUPT, …) need no answer from a Gofer.
  }

  private refuse(sid: string, message: string): void {
    this.send({ type: 'ERROR', session_id: sid, message, error: message });
  }

  /** The caller signs its CONNECT's payload with its Ed25519 key; the verified `from` is who asked. */
  private onConnect(sid: string, msg: Record<string, unknown>): void {
    const verdict = this.verifyConnect(msg);
    if (typeof verdict !== 'string') {
      this.refuse(sid, `unauthorized: ${verdict.error}`);
      return;
    }
    const caller = verdict;
    const existing = this.sessions.get(sid);
    if (existing && existing.caller !== caller) {
      this.refuse(sid, 'unauthorized: this session belongs to another caller');
      return;
    }
    if (existing) existing.connection = msg.relay_connection;
    else {
      if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
      this.sessions.set(sid, {
        caller,
        connection: msg.relay_connection,
        history: [],
        queue: Promise.resolve(),
        seenAt: Date.now(),
      });
    }
    this.send({
      type: 'CONNECTED',
      session_id: sid,
      status: existing ? 'connected' : 'new',
      protocol: PROTOCOL,
    });
  }

  private verifyConnect(msg: Record<string, unknown>): string | { error: string } {
    const { from, payload, signature } = msg;
    if (typeof from !== 'string' || !ADDRESS.test(from)) return { error: 'a signed CONNECT is required' };
    if (
      typeof payload !== 'object' ||
      payload === null ||
      Array.isArray(payload) ||
      typeof signature !== 'string'
    )
      return { error: 'a signed CONNECT is required' };
    const p = payload as Record<string, unknown>;
    if (p.to !== this.address) return { error: 'this CONNECT is for another agent' };
    const ts = p.timestamp;
    if (typeof ts !== 'number' || Math.abs(Date.now() / 1000 - ts) > CONNECT_SKEW_S)
      return { error: 'CONNECT timestamp out of range' };
    // The signed forms the hosts accept: Python's compact canonical JSON, the same with raw
    // UTF-8, and the top-level-sorted JSON.stringify of the TS client 0.1.4.
    const sorted = Object.fromEntries(
      Object.keys(p)
        .sort()
        .map((k) => [k, p[k]]),
    );
    const forms = [
      canonicalJson(p, COMMAND_STYLE),
      canonicalJson(p, { spaced: false, ascii: false }),
      JSON.stringify(sorted),
    ];
    if (!forms.some((f) => verifiedBy(from, f, signature))) return { error: 'invalid signature' };
    const sig = signature.toLowerCase().replace(/^0x/, '');
    if (ts <= this.forgottenUpTo || this.usedConnects.get(ts)?.has(sig))
      return { error: 'this CONNECT was already used' };
    while (this.usedCount >= MAX_USED_CONNECTS) {
      const earliest = Math.min(...this.usedConnects.keys());
      this.forget(earliest, this.usedConnects.get(earliest)!);
      this.forgottenUpTo = Math.max(this.forgottenUpTo, earliest);
    }
    const sigs = this.usedConnects.get(ts) ?? new Set<string>();
    this.usedConnects.set(ts, sigs.add(sig));
    this.usedCount++;
    return from;
  }

  private forget(ts: number, sigs: Set<string>): void {
    this.usedConnects.delete(ts);
    this.usedCount -= sigs.size;
  }

  private onInput(sid: string, msg: Record<string, unknown>): void {
    const session = this.sessions.get(sid);
    if (!session || session.connection !== msg.relay_connection)
      return this.refuse(sid, 'unauthorized: CONNECT first');
    const prompt = msg.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') return this.refuse(sid, 'INPUT needs a prompt');
    if (prompt.length > MAX_PROMPT_CHARS)
      return this.refuse(sid, `Prompt too long (max ${MAX_PROMPT_CHARS} characters)`);
    session.seenAt = Date.now();
    session.queue = session.queue.then(async () => {
      const started = Date.now();
      try {
        // Nothing is spent (no brain call, no row) for a turn the budgets refuse.
        const refused = await this.opts.admit(session.caller);
        if (refused !== null) return this.refuse(sid, refused);
        const out = await this.opts.answer({ caller: session.caller, history: [...session.history], prompt });
        if (!out.ok) return this.refuse(sid, out.error);
        session.history.push({ from: 'caller', content: prompt }, { from: 'gofer', content: out.content });
        if (session.history.length > 2 * SESSION_TURNS)
          session.history.splice(0, session.history.length - 2 * SESSION_TURNS);
        this.send({
          type: 'OUTPUT',
          session_id: sid,
          result: out.content,
          duration_ms: Date.now() - started,
          session: { session_id: sid },
        });
      } catch (err) {
        this.opts.logger.warn({ goferId: this.goferId, err: errorKind(err) }, 'relay turn failed');
        this.refuse(sid, 'The Gofer could not answer now; try again later');
      }
    });
  }
}

/** An error's class and code only: messages may quote what they were given. */
const errorKind = (err: unknown) => ({
  type: err instanceof Error ? err.name : typeof err,
  code: (err as { code?: unknown } | null)?.code,
});
