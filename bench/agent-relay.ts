/**
 * The ConnectOnion agent relay (docs/agent-relay.md): round-trip latency client → relay →
 * agent → relay → client and frames per second, beside a raw WebSocket echo on loopback measured in
 * the same run. Paths: the agent and the client on one replica; on two replicas (frames cross through
 * Redis pub/sub); both through the edge. The agent is the tests' RelayAgent answering each INPUT with
 * an OUTPUT. Usage:
 *   bash infra/node.sh node bench/agent-relay.ts [roundTrips=1000] [seconds=5] [window=64]
 * Prints the fleet's CPU per round trip of each relay path (bench/cost.ts), written to
 * docs/bench/agent-relay-cost.json.
 */
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { TestFleet } from '@oan/testing';
import { RelayAgent } from '../test/relayAgent.ts';
import { costMeter, loadAverage } from './cost.ts';
import { fmt, percentiles } from './stats.ts';

const ROUND_TRIPS = Number(process.argv[2] ?? 1000);
const SECONDS = Number(process.argv[3] ?? 5);
const WINDOW = Number(process.argv[4] ?? 64);

interface Channel {
  send(text: string): void;
  onFrame(fn: (text: string) => void): void;
  close(): void;
}

const open = async (url: string): Promise<WebSocket> => {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise((r, j) => ws.on('open', r).on('error', j));
  return ws;
};

/** A /ws/input session to `agent`: CONNECT, wait for CONNECTED, then INPUT frames answered by OUTPUT. */
async function relayChannel(relayUrl: string, agent: string): Promise<Channel> {
  const ws = await open(`${relayUrl}/ws/input`);
  const connected = new Promise<void>((r) =>
    ws.once('message', (d) => {
      if ((JSON.parse((d as Buffer).toString()) as { type: string }).type === 'CONNECTED') r();
    }),
  );
  ws.send(
    JSON.stringify({ type: 'CONNECT', to: agent, timestamp: Math.floor(Date.now() / 1000), payload: {} }),
  );
  await connected;
  return {
    send: (t) => ws.send(t),
    onFrame: (fn) => ws.on('message', (d) => fn((d as Buffer).toString())),
    close: () => ws.close(),
  };
}

async function rawChannel(url: string): Promise<Channel> {
  const ws = await open(url);
  return {
    send: (t) => ws.send(t),
    onFrame: (fn) => ws.on('message', (d) => fn((d as Buffer).toString())),
    close: () => ws.close(),
  };
}

const input = (i: number) =>
  JSON.stringify({ type: 'INPUT', input_id: `i${i}`, prompt: `bench ${i}`, to: 'x' });

/** Sequential round trips (latency), then a window of frames in flight for SECONDS (frames/s). */
async function measure(ch: Channel) {
  let waiting: (() => void) | undefined;
  let answered = 0;
  ch.onFrame(() => {
    answered++;
    waiting?.();
  });
  const samples: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      waiting = r;
      ch.send(input(i));
    });
    samples.push(performance.now() - t0);
  }
  waiting = undefined;
  answered = 0;
  let sent = 0;
  const end = performance.now() + SECONDS * 1000;
  await new Promise<void>((done) => {
    const pump = () => {
      while (sent - answered < WINDOW && performance.now() < end) ch.send(input(sent++));
      if (performance.now() >= end) done();
    };
    waiting = pump;
    pump();
    setTimeout(done, SECONDS * 1000 + 50);
  });
  const rate = answered / SECONDS;
  ch.close();
  return { latency: percentiles(samples), rate, trips: ROUND_TRIPS + answered };
}

const echo = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
await new Promise((r) => echo.once('listening', r));
echo.on('connection', (ws) => ws.on('message', (d) => ws.send(d)));
const echoUrl = `ws://127.0.0.1:${(echo.address() as AddressInfo).port}`;

const fleet = await TestFleet.start({
  only: ['outbox', 'projector', 'agents1', 'agents2', 'edge'],
  env: { LOG_LEVEL: 'warn' },
});
const agents: RelayAgent[] = [];
try {
  const port = (name: string) => `ws://127.0.0.1:${fleet.plan.processes.find((p) => p.name === name)!.port}`;
  const edge = fleet.url.replace('http://', 'ws://');
  const host = async (url: string) => {
    const a = new RelayAgent(url, 'bench echo');
    a.pingOnInput = false;
    agents.push(a);
    await a.start();
    return a;
  };
  const onA1 = await host(port('agents1'));
  const onA2 = await host(port('agents2'));
  // The raw echo runs in this process: only the relay's paths are metered.
  const meter = await costMeter(fleet);
  const metered = async (name: string, ch: Channel) =>
    (
      await meter.phase(
        name,
        () => measure(ch),
        (r) => r.trips,
        `round trip (${name})`,
      )
    ).result;
  const rows: [string, Awaited<ReturnType<typeof measure>>][] = [];
  rows.push(['raw ws echo (loopback)', await measure(await rawChannel(echoUrl))]);
  rows.push([
    'relay, one replica',
    await metered('one replica', await relayChannel(port('agents1'), onA1.address)),
  ]);
  rows.push([
    'relay, across replicas',
    await metered('across replicas', await relayChannel(port('agents1'), onA2.address)),
  ]);
  rows.push([
    'relay through the edge',
    await metered('through the edge', await relayChannel(edge, onA2.address)),
  ]);
  console.log(`\nround trips: ${ROUND_TRIPS} sequential; throughput: ${WINDOW} in flight for ${SECONDS} s`);
  console.log('| path | p50 | p95 | p99 | frames/s (round trips) |');
  console.log('|---|---|---|---|---|');
  for (const [name, r] of rows) {
    const l = r.latency;
    console.log(`| ${name} | ${fmt(l.p50)} | ${fmt(l.p95)} | ${fmt(l.p99)} | ${Math.round(r.rate)} |`);
  }
  console.log(`costs: ${meter.save('agent-relay')}`);
  console.log(`load average after the run: ${loadAverage()}`);
} finally {
  for (const a of agents) a.stop();
  echo.close();
  await fleet.stop();
}
