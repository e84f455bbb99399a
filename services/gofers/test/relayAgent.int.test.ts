import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { COMMAND_STYLE, canonicalJson } from '@oan/protocol';
import { waitFor } from '@oan/testing';
import { GoferAgent, MAX_USED_CONNECTS, SESSION_TURNS, type CallerTurn } from '../src/relay/agent.ts';
import { addressOf, newRelayKey, signText } from '../src/relay/keys.ts';

/**
 * One published Gofer's agent against a relay played by the test (a real socket on port 0): what
 * it keeps per caller must stay bounded however long a session or a flood of CONNECTs goes on.
 */
let server: WebSocketServer;
let relay: WebSocket;
const frames: Record<string, unknown>[] = [];
const turns: CallerTurn[] = [];
let agent: GoferAgent;
const key = newRelayKey();
const callerKey = newRelayKey();
const caller = addressOf(callerKey);

beforeAll(async () => {
  server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => server.on('listening', r));
  const connected = new Promise<WebSocket>((r) => server.on('connection', r));
  agent = new GoferAgent({
    goferId: 'g1',
    key,
    urls: [`ws://127.0.0.1:${(server.address() as AddressInfo).port}`],
    summary: 'Scout: finds things',
    admit: async () => null,
    answer: async (turn) => {
      turns.push(turn);
      return { ok: true, content: `answer ${turns.length}` };
    },
    logger: { info: () => undefined, warn: () => undefined } as never,
  });
  agent.start();
  relay = await connected;
  relay.on('message', (d) => {
    const f = JSON.parse((d as Buffer).toString()) as Record<string, unknown>;
    if (f.type === 'ANNOUNCE') relay.send('{"type":"ANNOUNCE_OK"}');
    else frames.push(f);
  });
  await waitFor(() => agent.listed, { what: 'the agent listed' });
});
afterAll(async () => {
  await agent?.stop();
  server?.close();
});

const connectFrame = (sid: string, timestamp: number, nonce = sid) => {
  const payload = { to: agent.address, timestamp, nonce };
  return JSON.stringify({
    type: 'CONNECT',
    session_id: sid,
    from: caller,
    payload,
    signature: signText(callerKey, canonicalJson(payload, COMMAND_STYLE)),
  });
};
const now = () => Math.floor(Date.now() / 1000);

describe('a long relay session', () => {
  it(`keeps and gives the brain its last ${SESSION_TURNS} turns only`, async () => {
    relay.send(connectFrame('long', now()));
    for (let i = 1; i <= SESSION_TURNS + 5; i++)
      relay.send(JSON.stringify({ type: 'INPUT', session_id: 'long', prompt: `turn ${i}` }));
    await waitFor(() => turns.length === SESSION_TURNS + 5, { what: 'every turn answered' });
    expect(turns.at(-1)!.history).toHaveLength(2 * SESSION_TURNS);
    expect(turns.at(-1)!.history[0]).toEqual({ from: 'caller', content: 'turn 5' });
  });
});

describe('a session whose CONNECT came from one client socket', () => {
  it('answers INPUT from that socket only, until the caller signs a CONNECT on the new one', async () => {
    const connect = JSON.parse(connectFrame('bound', now())) as Record<string, unknown>;
    const before = frames.length;
    relay.send(JSON.stringify({ ...connect, relay_connection: 'socket-1' }));
    const input = (from: string, prompt: string) =>
      relay.send(JSON.stringify({ type: 'INPUT', session_id: 'bound', prompt, relay_connection: from }));
    input('socket-2', 'from a socket that never signed');
    input('socket-1', 'from the signed socket');
    await waitFor(() => frames.length >= before + 3, { what: 'three answers' });
    expect(frames.slice(before, before + 3)).toMatchObject([
      { type: 'CONNECTED' },
      { type: 'ERROR' },
      { type: 'OUTPUT' },
    ]);
    expect(frames[before + 1]!.error).toBe('unauthorized: CONNECT first');
    expect(turns.at(-1)!.prompt).toBe('from the signed socket');

    // The caller comes back on another socket and signs again: that socket now holds the session.
    const again = JSON.parse(connectFrame('bound', now(), 'bound-again')) as Record<string, unknown>;
    relay.send(JSON.stringify({ ...again, relay_connection: 'socket-3' }));
    input('socket-1', 'from the old socket');
    input('socket-3', 'from the new socket');
    await waitFor(() => frames.length >= before + 6, { what: 'three more answers' });
    expect(frames.slice(before + 3, before + 6)).toMatchObject([
      { type: 'CONNECTED' },
      { type: 'ERROR' },
      { type: 'OUTPUT' },
    ]);
    expect(turns.at(-1)!.prompt).toBe('from the new socket');
  });
});

describe('a replayed CONNECT', () => {
  it('is refused on another session', async () => {
    const frame = connectFrame('r-1', now());
    const before = frames.length;
    relay.send(frame);
    relay.send(frame.replace('"r-1"', '"r-2"'));
    await waitFor(() => frames.length >= before + 2, { what: 'two answers' });
    expect(frames.slice(before).map((f) => f.type)).toEqual(['CONNECTED', 'ERROR']);
  });
});

describe('whatever frames a relay carries to a published Gofer', () => {
  // Hostile or broken frames as a stranger (or a broken relay) could send them: every field may be
  // missing, of another type, signed by nobody or by another key, for another agent, replayed.
  // Sessions of their own: the ones the cases above verified may rightly be answered.
  const sid = fc.oneof(
    fc.constantFrom('fz-1', 'fz-2', ''),
    fc.string({ maxLength: 8 }).map((x) => `fz-${x}`),
    fc.integer(),
  );
  const anyValue = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null), fc.boolean());
  const frame = fc.record(
    {
      type: fc.oneof(fc.constantFrom('CONNECT', 'INPUT', 'close', 'EXEC', 'SESSION_STATUS'), anyValue),
      session_id: sid,
      relay_connection: fc.oneof(fc.constantFrom('socket-1', 'socket-3'), anyValue),
      from: fc.oneof(fc.constant(caller), fc.constant(addressOf(newRelayKey())), anyValue),
      payload: fc.oneof(
        fc.record({ to: fc.oneof(fc.constant(agent?.address), anyValue), timestamp: fc.integer() }),
        anyValue,
      ),
      signature: fc.oneof(
        fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 128, maxLength: 128 }),
        anyValue,
      ),
      prompt: fc.oneof(fc.string({ maxLength: 40 }), anyValue),
    },
    { requiredKeys: [] },
  );

  it('never reaches the brain, and answers nothing but ERROR, unless a caller signed a CONNECT', async () => {
    const turnsBefore = turns.length;
    let barrier = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 12 }), async (batch) => {
        const before = frames.length;
        for (const f of batch) relay.send(JSON.stringify(f));
        // A PING on a session of its own, answered after every frame sent before it.
        const mark = `barrier-${++barrier}`;
        relay.send(JSON.stringify({ type: 'PING', session_id: mark }));
        await waitFor(() => frames.some((f) => f.session_id === mark), {
          what: 'the barrier PONG',
          timeoutMs: 3000,
        });
        const answers = frames.slice(before).filter((f) => f.session_id !== mark);
        // ERROR for what it refuses, PONG for a PING, and its own PINGs of live sessions (a heartbeat).
        expect(answers.filter((f) => !['ERROR', 'PONG', 'PING'].includes(f.type as string))).toEqual([]);
        expect(turns.length).toBe(turnsBefore);
      }),
      { numRuns: Number(process.env.FZ_RUNS ?? 60) },
    );
    // And it still serves an honest caller.
    relay.send(connectFrame('fz-honest', now()));
    relay.send(JSON.stringify({ type: 'INPUT', session_id: 'fz-honest', prompt: 'still there?' }));
    await waitFor(() => turns.length === turnsBefore + 1, { what: 'the honest turn' });
    expect(turns.at(-1)!.prompt).toBe('still there?');
  }, 60_000);
});

describe('a flood of signed CONNECTs', () => {
  it('remembers a bounded set of signatures, and still refuses a replay of a forgotten one', async () => {
    const oldest = connectFrame('s-0', now() - 200);
    const before = frames.length;
    relay.send(oldest);
    for (let i = 1; i <= MAX_USED_CONNECTS; i++) relay.send(connectFrame(`s-${i}`, now()));
    // Each is answered (CONNECTED, or ERROR once a whole second was forgotten under the flood); the
    // agent's heartbeat PINGs to the sessions it holds interleave with the answers and are not counted.
    const answered = () => frames.slice(before).filter((f) => f.type !== 'PING').length;
    await waitFor(() => answered() >= MAX_USED_CONNECTS + 1, {
      what: 'every CONNECT answered',
      timeoutMs: 60_000,
    });
    expect((agent as unknown as { usedCount: number }).usedCount).toBeLessThanOrEqual(MAX_USED_CONNECTS);
    const used = (agent as unknown as { usedConnects: Map<number, Set<string>> }).usedConnects;
    expect([...used.values()].reduce((n, s) => n + s.size, 0)).toBeLessThanOrEqual(MAX_USED_CONNECTS);
    const after = frames.length;
    relay.send(oldest.replace('"s-0"', '"s-replay"'));
    const replayAnswers = () => frames.slice(after).filter((f) => f.session_id === 's-replay');
    await waitFor(() => replayAnswers().length > 0, { what: 'the answer to the replay' });
    expect(replayAnswers()).toHaveLength(1);
    expect(replayAnswers()[0]).toMatchObject({
      type: 'ERROR',
      message: 'unauthorized: this CONNECT was already used',
    });
  }, 90_000);
});
