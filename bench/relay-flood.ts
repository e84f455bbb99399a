/**
 * A key-rotating flood against one published Gofer (docs/security.md, the agent relay's door): every
 * caller is a fresh Ed25519 key with one INPUT, through the edge, on loopback only, bounded in count
 * and time. Prints the Gofer's brain calls, the events appended to its stream and the relay's log,
 * the gofers process's memory, and whether an honest caller is still answered (on the flooded Gofer
 * before its budget is spent, and on another owner's Gofer after the flood). The relay's
 * per-client-address limits are raised for the run, as if the flood came from many addresses;
 * the Gofer's and the owner's budgets are the defaults. Usage:
 *   bash infra/node.sh node bench/relay-flood.ts [callers=600] [concurrency=16] [seconds=90]
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
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

const CALLERS = Number(process.argv[2] ?? 600);
const CONCURRENCY = Number(process.argv[3] ?? 16);
const SECONDS = Number(process.argv[4] ?? 90);

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
  const rssMiB = () => {
    const pid = fleet.running.get('gofers')!.child.pid!;
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return Number(kb) / 1024;
  };
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
    rss: rssMiB(),
  };
  const honestBefore = await ask(target.address, 'honest, before the flood');
  const refusals = new Map<string, number>();
  let answered = 0;
  let sent = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < CALLERS && performance.now() < deadline) {
        sent++;
        const r = await ask(target.address, `flood ${sent}`);
        if (r.ok) answered++;
        else {
          const why = r.error.replace(/^Agent error: /, '').slice(0, 60);
          refusals.set(why, (refusals.get(why) ?? 0) + 1);
        }
      }
    }),
  );
  const floodSeconds = (performance.now() - t0) / 1000;
  const honestAfterSame = await ask(target.address, 'honest, after the flood');
  const honestOther = await ask(other.address, 'honest, another owner');
  const after = {
    brain: callerCalls(),
    gofer: await goferEvents(),
    agents: await agentEvents(),
    rss: rssMiB(),
  };

  console.log(`\nflood: ${sent} fresh caller keys, ${CONCURRENCY} at a time, ${floodSeconds.toFixed(1)} s`);
  console.log('| figure | value |');
  console.log('|---|---|');
  console.log(`| flood INPUTs answered | ${answered} |`);
  for (const [why, n] of refusals) console.log(`| refused: ${why} | ${n} |`);
  console.log(`| caller brain calls (incl. 1 honest) | ${after.brain - before.brain} |`);
  console.log(`| events appended to the Gofer's stream | ${after.gofer - before.gofer} |`);
  console.log(`| events appended to the relay's log | ${after.agents - before.agents} |`);
  console.log(`| gofers RSS before → after | ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MiB |`);
  console.log(
    `| honest caller before the flood (same Gofer) | ${honestBefore.ok ? 'answered' : honestBefore.error} in ${honestBefore.ms.toFixed(0)} ms |`,
  );
  console.log(
    `| honest caller after the flood (same Gofer) | ${honestAfterSame.ok ? 'answered' : honestAfterSame.error.slice(0, 70)} |`,
  );
  console.log(
    `| honest caller of another owner's Gofer after the flood | ${honestOther.ok ? 'answered' : honestOther.error} in ${honestOther.ms.toFixed(0)} ms |`,
  );
  console.log(
    `load average after the run: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
} finally {
  for (const c of connectors) c.close();
  await db.end();
  await fleet.stop();
  await fake.close();
}
