/**
 * A key-rotating flood against one published Gofer (docs/security.md, the agent relay's door): every
 * caller is a fresh Ed25519 key with one INPUT, through the edge, on loopback only, bounded in count
 * and time. Prints the Gofer's brain calls, the events appended to its stream and the relay's log,
 * and a timeline taken while the flood runs: every `probe` seconds an honest caller (a fresh key) asks
 * the flooded Gofer and another owner's Gofer, and the RSS of the gofers process and of both agents
 * replicas is read, so a plateau (or a climb) shows. The flooded Gofer answers its honest callers until
 * its budget is spent and refuses them after (ADR 0027); the other Gofer must answer throughout. The
 * relay's per-client-address limits are raised for the run, as if the flood came from many
 * addresses; the Gofer's and the owner's budgets are the defaults unless GOFER_RELAY_TURNS_PER_HOUR /
 * GOFER_RELAY_ACCOUNT_TURNS_PER_HOUR are set in the bench's environment. Usage:
 *   bash infra/node.sh node bench/relay-flood.ts [callers=600] [concurrency=16] [seconds=90] [probe=2]
 * Prints the fleet's CPU per flood INPUT and per appended event (bench/cost.ts; the fake brain runs in
 * this process and is not counted), written to docs/bench/relay-flood-cost.json.
 */
import { readFileSync } from 'node:fs';
import { connect, address as coAddress } from 'connectonion';
import pg from 'pg';
import {
  chatCompletion,
  FakeChatCompletions,
  joinAccount,
  TestConnector,
  TestFleet,
  type ChatRequest,
} from '@oan/testing';
import { costMeter, loadAverage } from './cost.ts';

const CALLERS = Number(process.argv[2] ?? 600);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const SECONDS = Number(process.argv[4] ?? 90);
const PROBE_SECONDS = Number(process.argv[5] ?? 2);
/** Budgets the bench's caller may set (a small one shows the refusal in a short run). */
const BUDGETS = Object.fromEntries(
  ['GOFER_RELAY_TURNS_PER_HOUR', 'GOFER_RELAY_ACCOUNT_TURNS_PER_HOUR'].flatMap((k) =>
    process.env[k] ? [[k, process.env[k]]] : [],
  ),
);

const fake = await FakeChatCompletions.start();
fake.responder = (body: ChatRequest) => {
  const caller = body.messages[0]?.content.includes('Someone you do not know is calling you there');
  return chatCompletion(
    JSON.stringify(
      caller
        ? { content: 'Hello, I am a Gofer.' }
        : { content: 'Noted.', pendingQuery: false, responseConstraints: null },
    ),
  );
};
const callerCalls = () =>
  fake.recorded.filter((r) => r.body.messages[0]?.content.includes('calling you there')).length;

const fleet = await TestFleet.start({
  only: ['auth', 'gofers', 'outbox', 'projector', 'gateway1', 'gateway2', 'agents1', 'agents2', 'edge'],
  env: {
    LOG_LEVEL: 'warn',
    GOFER_BRAIN: 'openai',
    OPENAI_BASE_URL: fake.baseUrl,
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_MODEL: 'fake-model',
    OPENAI_MAX_RETRIES: '0',
    AGENTS_SOCKETS_PER_MINUTE: '1000000',
    AGENTS_CLIENT_FRAMES_PER_MINUTE: '1000000',
    ...BUDGETS,
  },
});
const db = new pg.Client({ connectionString: fleet.env.DATABASE_URL });
await db.connect();
const connectors: TestConnector[] = [];
try {
  const edge = fleet.url.replace('http://', 'ws://');
  const published = async (name: string) => {
    const a = await joinAccount(fleet.url, fleet.mailbox, `${name}-${fleet.id}@example.com`, 'dsh');
    const c = new TestConnector({ baseUrl: fleet.url, token: a.apiKey });
    connectors.push(c);
    const goferId = (await c.rest<{ goferId: string }>('POST', '/gofers', {})).body.goferId;
    const address = (await c.rest<{ address: string }>('PUT', `/gofers/${goferId}/relay`)).body.address;
    return { goferId, address };
  };
  const target = await published('flooded-owner');
  const other = await published('other-owner');
  const count = async (q: string, args: unknown[] = []) =>
    Number((await db.query<{ n: string }>(q, args)).rows[0]!.n);
  const goferEvents = () =>
    count('select count(*)::text as n from gofers.events where stream_id = $1', [`gofer-${target.goferId}`]);
  const agentEvents = () => count('select count(*)::text as n from agents.events');
  const rssMiB = (name: 'gofers' | 'agents1' | 'agents2') => {
    const pid = fleet.running.get(name)!.child.pid!;
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb) / 1024;
  };
  const rss = () => ({ gofers: rssMiB('gofers'), agents1: rssMiB('agents1'), agents2: rssMiB('agents2') });
  const mib = (r: ReturnType<typeof rss>) =>
    `${r.gofers.toFixed(0)} / ${r.agents1.toFixed(0)} / ${r.agents2.toFixed(0)}`;
  const ask = async (address: string, prompt: string) => {
    const t0 = performance.now();
    try {
      await connect(address, { relayUrl: edge, keys: coAddress.generate() }).input(prompt, {
        timeoutMs: 20_000,
      });
      return { ok: true, ms: performance.now() - t0, error: '' };
    } catch (err) {
      return { ok: false, ms: performance.now() - t0, error: (err as Error).message };
    }
  };

  const before = {
    brain: callerCalls(),
    gofer: await goferEvents(),
    agents: await agentEvents(),
    rss: rss(),
  };
  const honestBefore = await ask(target.address, 'honest, before the flood');
  const meter = await costMeter(fleet);
  const refusals = new Map<string, number>();
  let answered = 0;
  let sent = 0;
  let flooding = true;
  const deadline = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  const short = (error: string) => error.replace(/^Agent error: /, '').slice(0, 60);
  /** One point of the timeline: honest callers of both Gofers asked at once, and the memory. */
  const timeline: {
    t: number;
    sent: number;
    answered: number;
    rss: ReturnType<typeof rss>;
    flooded: Awaited<ReturnType<typeof ask>>;
    other: Awaited<ReturnType<typeof ask>>;
  }[] = [];
  const probe = async () => {
    const t = (performance.now() - t0) / 1000;
    const at = { sent, answered };
    const [flooded, elsewhere] = await Promise.all([
      ask(target.address, `honest, during the flood at ${t.toFixed(1)} s`),
      ask(other.address, `honest, another owner, at ${t.toFixed(1)} s`),
    ]);
    timeline.push({ t, ...at, rss: rss(), flooded, other: elsewhere });
  };
  const probing = (async () => {
    while (flooding) {
      const next = performance.now() + PROBE_SECONDS * 1000;
      await probe();
      while (flooding && performance.now() < next) await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await meter.phase(
    'flood',
    async () => {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (sent < CALLERS && performance.now() < deadline) {
            sent++;
            const r = await ask(target.address, `flood ${sent}`);
            if (r.ok) answered++;
            else {
              const why = short(r.error);
              refusals.set(why, (refusals.get(why) ?? 0) + 1);
            }
          }
        }),
      );
    },
    () => sent,
    'flood INPUT (fresh caller key)',
  );
  flooding = false;
  await probing;
  const floodSeconds = (performance.now() - t0) / 1000;
  const honestAfterSame = await ask(target.address, 'honest, after the flood');
  const honestOther = await ask(other.address, 'honest, another owner');
  const after = {
    brain: callerCalls(),
    gofer: await goferEvents(),
    agents: await agentEvents(),
    rss: rss(),
  };

  console.log(`\nflood: ${sent} fresh caller keys, ${CONCURRENCY} at a time, ${floodSeconds.toFixed(1)} s`);
  console.log('| figure | value |');
  console.log('|---|---|');
  console.log(`| flood INPUTs answered | ${answered} |`);
  for (const [why, n] of refusals) console.log(`| refused: ${why} | ${n} |`);
  const honest = [
    honestBefore,
    honestAfterSame,
    honestOther,
    ...timeline.flatMap((p) => [p.flooded, p.other]),
  ].filter((r) => r.ok).length;
  console.log(
    `| caller brain calls (incl. ${honest} answered honest turns, either Gofer) | ${after.brain - before.brain} |`,
  );
  console.log(`| events appended to the Gofer's stream | ${after.gofer - before.gofer} |`);
  console.log(`| events appended to the relay's log | ${after.agents - before.agents} |`);
  console.log(
    `| RSS before → after, gofers / agents1 / agents2 | ${mib(before.rss)} → ${mib(after.rss)} MiB |`,
  );
  console.log(
    `| honest caller before the flood (same Gofer) | ${honestBefore.ok ? 'answered' : honestBefore.error} in ${honestBefore.ms.toFixed(0)} ms |`,
  );
  const during = (pick: (p: (typeof timeline)[number]) => Awaited<ReturnType<typeof ask>>) => {
    const ok = timeline.filter((p) => pick(p).ok);
    const lastOk = ok.at(-1);
    const firstRefused = timeline.find((p) => !pick(p).ok);
    const slowest = Math.max(0, ...ok.map((p) => pick(p).ms));
    return (
      `answered ${ok.length} of ${timeline.length} (slowest ${slowest.toFixed(0)} ms)` +
      (lastOk ? `, last at ${lastOk.t.toFixed(1)} s` : '') +
      (firstRefused
        ? `, first refused at ${firstRefused.t.toFixed(1)} s: ${short(pick(firstRefused).error)}`
        : '')
    );
  };
  console.log(`| honest callers of the flooded Gofer during the flood | ${during((p) => p.flooded)} |`);
  console.log(`| honest callers of another owner's Gofer during the flood | ${during((p) => p.other)} |`);
  console.log(
    `| honest caller after the flood (same Gofer) | ${honestAfterSame.ok ? 'answered' : honestAfterSame.error.slice(0, 70)} |`,
  );
  console.log(
    `| honest caller of another owner's Gofer after the flood | ${honestOther.ok ? 'answered' : honestOther.error} in ${honestOther.ms.toFixed(0)} ms |`,
  );
  const verdict = (r: Awaited<ReturnType<typeof ask>>) =>
    r.ok ? `answered ${r.ms.toFixed(0)} ms` : `refused: ${short(r.error).slice(0, 40)}`;
  console.log(`\ntimeline (every ${PROBE_SECONDS} s while the flood ran; RSS in MiB)`);
  console.log(
    '| t (s) | flood sent | flood answered | RSS gofers | RSS agents1 | RSS agents2 | honest, flooded Gofer | honest, other Gofer |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const p of timeline) {
    console.log(
      `| ${p.t.toFixed(1)} | ${p.sent} | ${p.answered} | ${p.rss.gofers.toFixed(0)} | ${p.rss.agents1.toFixed(0)} | ${p.rss.agents2.toFixed(0)} | ${verdict(p.flooded)} | ${verdict(p.other)} |`,
    );
  }
  console.log(`costs: ${meter.save('relay-flood')}`);
  console.log(`load average after the run: ${loadAverage()}`);
} finally {
  for (const c of connectors) c.close();
  await db.end();
  await fleet.stop();
  await fake.close();
}
