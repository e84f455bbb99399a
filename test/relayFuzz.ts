// Over 250 lines: the frames, the exchange and the verdict are one protocol's fuzz, read together.
import fc from 'fast-check';
import WebSocket from 'ws';

/**
 * Hostile frames for the agent relay's sockets (docs/agent-relay.md), as test/fuzz.e2e.test.ts sends
 * them through the edge: random bytes, text that is not JSON or is cut short, objects of the relay's
 * frame types with fields of the wrong type or size, unknown types, signatures that verify nothing,
 * strings up to just under the 1 MiB frame and frames just over it. None carries a valid signature,
 * so no door may accept one: no ANNOUNCE_OK, no CONNECTED, no OUTPUT.
 */

/** The relay's socket doors (services/agents/src/relay/server.ts), seed 001's spellings included. */
export const RELAY_DOORS = ['/ws/announce', '/announce', '/ws/input', '/ws/lookup', '/lookup'] as const;
export type RelayDoor = (typeof RELAY_DOORS)[number];
const doorKind = (door: RelayDoor) =>
  door.endsWith('announce') ? 'agent' : door === '/ws/input' ? 'client' : 'lookup';

/** The frame limit of the edge and the relay: a larger frame closes the socket with 1009. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** Addresses the fuzz names: the honest agent's and the published Gofer's, set once they exist. */
export interface Known {
  agent: string;
  gofer: string;
}

/** What goes out on the socket: text (maybe not JSON), or bytes as a binary frame. */
export type Frame = { text: string; label: string } | { bytes: Buffer; label: string };
const text = (t: string, label = t.length > 80 ? `${t.slice(0, 60)}…(${t.length} chars)` : t): Frame => ({
  text: t,
  label,
});
export const frameSize = (f: Frame) => ('text' in f ? Buffer.byteLength(f.text) : f.bytes.length);

const UNKNOWN = `0x${'ab'.repeat(32)}`;
/** Any 32 bytes are an address no one announced (the fuzz's own keys never sign). */
const randomAddress = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((u) => `0x${Buffer.from(u).toString('hex')}`);
const HOSTILE = ['', ' ', '\u0000', '\ud800', 'x\udc00y', '\u202e', '🦄', '__proto__', 'null', '../../x'];
/** A long string, made only when sent (fast-check prints its length). */
class Long {
  readonly n: number;
  constructor(n: number) {
    this.n = n;
  }
  [fc.toStringMethod]() {
    return `"x"×${this.n}`;
  }
}
type V = null | boolean | number | string | Long | V[] | { [k: string]: V };
const plain = (v: V): unknown =>
  v instanceof Long
    ? 'x'.repeat(v.n)
    : Array.isArray(v)
      ? v.map(plain)
      : v && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
        : v;

const hostileString = fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ unit: 'binary', maxLength: 20 }));
/** Up to just under the 1 MiB frame once the rest of the frame is added. */
const long = fc.constantFrom(1_001, 4_097, 100_000, 1_000_000).map((n) => new Long(n));
const scalar: fc.Arbitrary<V> = fc.oneof(
  fc.constantFrom<V>(null, true, false, 0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER + 2),
  hostileString,
);
const anyValue: fc.Arbitrary<V> = fc.oneof(
  { arbitrary: scalar, weight: 4 },
  { arbitrary: long, weight: 1 },
  { arbitrary: fc.array(scalar, { maxLength: 3 }), weight: 1 },
  { arbitrary: fc.dictionary(hostileString, scalar, { maxKeys: 3 }), weight: 1 },
);

/** The frame types each door speaks, most of a door's frames are of these. */
const DOOR_TYPES: Record<ReturnType<typeof doorKind>, string[]> = {
  agent: ['ANNOUNCE'],
  client: ['CONNECT', 'INPUT', 'PING'],
  lookup: ['GET_AGENT', 'FIND'],
};
const OTHER_TYPES = [
  ...['ANNOUNCE', 'CONNECT', 'INPUT', 'GET_AGENT', 'FIND', 'PING', 'PONG', 'OUTPUT', 'ERROR', 'close'],
  ...['EXEC', 'ANNOUNCE_OK', 'CONNECTED', 'AGENT_INFO', 'announce', 'SESSION_STATUS'],
];

/**
 * A frame of the door's protocol, well formed but for its signature (which verifies nothing), then
 * each field kept, dropped or replaced by a value of the wrong type or size, and stray fields added.
 */
function objectFrame(known: Known, door: RelayDoor): fc.Arbitrary<Record<string, V>> {
  const now = () => Math.floor(Date.now() / 1000);
  const address = fc.oneof(
    fc.constantFrom(known.agent, known.gofer, UNKNOWN, known.agent.toUpperCase(), known.agent.slice(0, 40)),
    randomAddress,
    anyValue,
  );
  // Never the honest echo agent: it would answer a fuzzed INPUT (an OUTPUT is its right).
  const to = fc.oneof(
    fc.constantFrom(UNKNOWN, known.gofer.toUpperCase(), known.gofer.slice(0, 40)),
    randomAddress,
    anyValue,
  );
  const timestamp = fc.oneof(fc.constantFrom<V>(0, -1, 1.5, 2 ** 60, now() - 3600), anyValue);
  const hex64 = fc.uint8Array({ minLength: 64, maxLength: 64 }).map((u) => Buffer.from(u).toString('hex'));
  const signature = fc.oneof(
    hex64.map((h) => `0x${h.toUpperCase()}`),
    fc.constantFrom<V>('', '0x', 'zz'.repeat(64)),
    anyValue,
  );
  const bad: Record<string, fc.Arbitrary<V>> = {
    address,
    to,
    from: address,
    timestamp,
    signature,
    summary: fc.oneof(hostileString, long, anyValue),
    endpoints: fc.oneof(
      fc.array(hostileString, { maxLength: 3 }),
      fc.constant(Array<V>(17).fill('x')),
      anyValue,
    ),
    profile: fc.oneof(
      fc.dictionary(hostileString, anyValue, { maxKeys: 3 }),
      fc.constant({ bio: new Long(5_000) }),
      anyValue,
    ),
    prompt: fc.oneof(hostileString, long, fc.constant(new Long(4_001)), anyValue),
    session_id: fc.oneof(fc.constantFrom<V>('', 'a b', 'x'.repeat(129)), anyValue),
    query: fc.oneof(hostileString, long, anyValue),
    payload: fc.oneof(fc.record({ to: address, timestamp }), anyValue),
  };
  const good = (type: V, me: string, sig: string): Record<string, V> => {
    const t = now();
    switch (typeof type === 'string' ? type : '') {
      case 'ANNOUNCE':
        return { address: me, timestamp: t, summary: 'fuzz', endpoints: [], signature: sig };
      case 'CONNECT':
        return {
          to: known.gofer,
          from: me,
          timestamp: t,
          payload: { to: known.gofer, timestamp: t },
          signature: sig,
        };
      case 'INPUT':
        return { to: known.gofer, prompt: 'hello', input_id: 'i1' };
      case 'GET_AGENT':
        return { address: known.agent, from: me };
      case 'FIND':
        return { query: 'echo agent', from: me };
      default:
        return { to: known.gofer };
    }
  };
  const type = fc.oneof(
    { arbitrary: fc.constantFrom<V>(...DOOR_TYPES[doorKind(door)]), weight: 6 },
    { arbitrary: fc.constantFrom<V>(...OTHER_TYPES), weight: 2 },
    { arbitrary: anyValue, weight: 1 },
  );
  return fc
    .tuple(type, fc.oneof(fc.constantFrom(known.agent, known.gofer), randomAddress), randomAddress, hex64)
    .chain(([t, spoofed, fresh, sig]) => {
      const base = good(t, t === 'ANNOUNCE' ? spoofed : fresh, sig);
      const field = (k: string): fc.Arbitrary<V | undefined> =>
        fc.oneof(
          { arbitrary: fc.constant(base[k]), weight: 6 },
          { arbitrary: fc.constant(undefined), weight: 1 },
          { arbitrary: bad[k] ?? anyValue, weight: 2 },
        );
      const keys = Object.keys(base);
      return fc
        .tuple(
          fc.tuple(...keys.map(field)),
          fc.dictionary(fc.constantFrom(...Object.keys(bad), 'relay_connection', 'x'), anyValue, {
            maxKeys: 2,
          }),
        )
        .map(([values, extra]) => {
          const o: Record<string, V> = { ...extra, type: t };
          keys.forEach((k, i) => {
            if (values[i] !== undefined) o[k] = values[i];
          });
          return o;
        });
    });
}

/** Any frame a stranger might send; `big` allows one over the frame limit. */
export function relayFrame(known: Known, door: RelayDoor): fc.Arbitrary<Frame> {
  const obj = objectFrame(known, door);
  const json = obj.map((o) => JSON.stringify(plain(o)));
  return fc.oneof(
    { arbitrary: json.map((t) => text(t)), weight: 8 },
    // Cut short, or with a byte spliced in that is not UTF-8.
    {
      arbitrary: fc.tuple(json, fc.double({ min: 0, max: 1, noNaN: true })).map(([t, at]) => {
        const cut = Math.floor(t.length * at);
        return text(t.slice(0, Math.min(cut, t.length - 1)), `cut(${t.slice(0, 40)}…@${cut})`);
      }),
      weight: 2,
    },
    {
      arbitrary: fc
        .constantFrom('{', '[]', '"x"', '1', 'null', '{"type":', "{'type':'PING'}", '\ufeff{}')
        .map((t) => text(t)),
      weight: 1,
    },
    {
      arbitrary: fc.uint8Array({ maxLength: 64 }).map((u) => ({ bytes: Buffer.from(u), label: 'bytes' })),
      weight: 2,
    },
    {
      arbitrary: fc.constantFrom('ff', 'c080', 'eda080').map((hex) => ({
        bytes: Buffer.concat([
          Buffer.from('{"type":"PING","x":"'),
          Buffer.from(hex, 'hex'),
          Buffer.from('"}'),
        ]),
        label: `invalid UTF-8 ${hex}`,
      })),
      weight: 1,
    },
    {
      arbitrary: fc
        .constantFrom(MAX_FRAME_BYTES + 1, 2 * MAX_FRAME_BYTES)
        .map((n) => text(JSON.stringify({ type: 'PING', x: 'x'.repeat(n) }), `{"type":"PING","x":"x"×${n}}`)),
      weight: 1,
    },
  );
}

export interface Exchange {
  door: RelayDoor;
  frames: Frame[];
  [fc.toStringMethod]?: () => string;
}
export const exchangeArb = (known: Known): fc.Arbitrary<Exchange> =>
  fc
    .oneof(
      // The input door reaches a published Gofer too: it is sent more.
      { arbitrary: fc.constantFrom(...RELAY_DOORS.filter((d) => d !== '/ws/input')), weight: 3 },
      { arbitrary: fc.constant('/ws/input' as const), weight: 2 },
    )
    .chain((door) =>
      fc.tuple(fc.constant(door), fc.array(relayFrame(known, door), { minLength: 1, maxLength: 3 })),
    )
    .map(([door, frames]) => ({
      door,
      frames,
      [fc.toStringMethod]: () => `${door} ${JSON.stringify(frames.map((f) => f.label))}`,
    }));

export interface Outcome {
  /** The HTTP status that refused the upgrade (a 429 past the per-client socket limit), or 101. */
  upgrade: number;
  answers: string[];
  /** The close code, or undefined while the socket was still open when the fuzz hung up. */
  closed?: number;
  /** The frames sent before the socket closed (the rest were not). */
  sent: number;
}

/**
 * Sends the frames on a fresh socket and collects what comes back: every answer, until the socket
 * closes or has been quiet for `quietMs` after the answers a door always gives (one per frame on the
 * announce and lookup doors; none promised on the input door, where an agent may stay silent).
 */
export async function exchange(
  base: string,
  x: Exchange,
  quietMs = 300,
  timeoutMs = 15_000,
): Promise<Outcome> {
  const ws = new WebSocket(`${base}${x.door}`, { maxPayload: 16 * MAX_FRAME_BYTES });
  const answers: string[] = [];
  let closed: number | undefined;
  let upgrade = 101;
  let lastAt = Date.now();
  const ended = new Promise<void>((resolve) => {
    ws.on('unexpected-response', (_req, res) => {
      upgrade = res.statusCode ?? 0;
      res.resume();
      ws.terminate();
      resolve();
    });
    ws.on('close', (code) => {
      closed = code;
      resolve();
    });
    ws.on('error', () => resolve());
  });
  ws.on('message', (d) => {
    answers.push((d as Buffer).toString('utf8'));
    lastAt = Date.now();
  });
  const opened = await Promise.race([
    new Promise<boolean>((r) => ws.once('open', () => r(true))),
    ended.then(() => false),
  ]);
  if (!opened) return { upgrade, answers, closed, sent: 0 };
  let sent = 0;
  for (const f of x.frames) {
    if (ws.readyState !== WebSocket.OPEN) break;
    ws.send('text' in f ? f.text : f.bytes, { binary: !('text' in f) });
    sent++;
    if (frameSize(f) > MAX_FRAME_BYTES) break;
  }
  const promised =
    doorKind(x.door) === 'client'
      ? 0
      : x.frames.slice(0, sent).filter((f) => frameSize(f) <= MAX_FRAME_BYTES).length;
  lastAt = Date.now();
  const deadline = Date.now() + timeoutMs;
  while (closed === undefined && Date.now() < deadline) {
    if (answers.length >= promised && Date.now() - lastAt >= quietMs) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  if (closed === undefined && answers.length < promised)
    throw new Error(`${answers.length} answers of ${promised} within ${timeoutMs} ms on ${x.door}`);
  const still = closed;
  ws.close();
  await Promise.race([ended, new Promise((r) => setTimeout(r, 1000))]);
  return { upgrade, answers, closed: still, sent };
}

/** Close codes a door may end a stranger's socket with: refused (1008), too big (1009). */
const CLOSE_CODES = new Set([1008, 1009]);
const ERROR_KEYS = new Set(['type', 'error', 'message', 'original_type', 'timestamp', 'session_id']);

/** What is wrong with a door's answers to frames that verify nothing (undefined when nothing is). */
export function relayDefect(x: Exchange, o: Outcome): string | undefined {
  if (o.upgrade !== 101) return o.upgrade === 429 ? undefined : `the upgrade answered ${o.upgrade}`;
  if (o.closed !== undefined && !CLOSE_CODES.has(o.closed)) return `closed with ${o.closed}`;
  // A socket refused at its first frame (1008) may close before a larger frame behind it is read.
  const oversize = x.frames.slice(0, o.sent).some((f) => frameSize(f) > MAX_FRAME_BYTES);
  if (oversize && o.closed !== 1009 && o.closed !== 1008)
    return `a frame over 1 MiB ended with ${o.closed}, not 1009`;
  for (const a of o.answers) {
    if (Buffer.byteLength(a) > 16 * 1024)
      return `an answer of ${Buffer.byteLength(a)} bytes (a quoted frame?)`;
    let m: Record<string, unknown>;
    try {
      m = JSON.parse(a) as Record<string, unknown>;
    } catch {
      return `an answer that is not JSON: ${a.slice(0, 200)}`;
    }
    const kind = doorKind(x.door);
    if (m.type === 'ERROR') {
      if (typeof m.error !== 'string' || m.message !== m.error)
        return `an ERROR without error = message: ${a}`;
      const odd = Object.keys(m).filter((k) => !ERROR_KEYS.has(k));
      if (odd.length > 0) return `an ERROR with ${odd.join()}: ${a.slice(0, 200)}`;
      if (/\n\s+at |node_modules|\.ts:\d+/.test(m.error)) return 'a stack trace in an ERROR';
    } else if (kind === 'lookup' && (m.type === 'AGENT_INFO' || m.type === 'AGENTS')) {
      continue;
    } else if (kind === 'client' && m.type === 'PONG') {
      continue; // a published Gofer answers a PING in a session it was sent
    } else return `a ${String(m.type)} on ${x.door} to a frame that verifies nothing: ${a.slice(0, 200)}`;
  }
  return undefined;
}
