import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Socket } from 'socket.io-client';
import type { OanEventEnvelope } from '@oan/protocol';
import {
  joinAccount,
  REPO_ROOT,
  TestConnector,
  waitFor,
  type JoinedAccount,
  type TestFleet,
} from '@oan/testing';

/** `work` on a connection of its own to `databaseUrl`, closed afterwards whatever happened. */
export async function withClient<T>(
  databaseUrl: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Every row of the event table, in a stable order, as text: what "byte for byte" compares. */
export function dumpEventTable(databaseUrl: string): Promise<string[]> {
  return withClient(databaseUrl, async (client) => {
    const r = await client.query<{ line: string }>(
      `select account_id || '|' || seq || '|' || event_id || '|' || type || '|' || envelope || '|' || created_at::text as line
         from read.oan_event order by account_id, seq`,
    );
    return r.rows.map((row) => row.line);
  });
}

/** Every row of each table as JSON text, in primary-key order: a replay must reproduce them. */
export function dumpTables(databaseUrl: string, tables: string[]): Promise<Record<string, string[]>> {
  return withClient(databaseUrl, async (client) => {
    const out: Record<string, string[]> = {};
    for (const t of tables) {
      const r = await client.query<{ row: string }>(`select to_jsonb(x)::text as row from ${t} x order by 1`);
      out[t] = r.rows.map((row) => row.row);
    }
    return out;
  });
}

/** Runs statements against the fleet's database (to damage read models a replay must rebuild). */
export function corrupt(databaseUrl: string, statements: string[]): Promise<void> {
  return withClient(databaseUrl, async (client) => {
    for (const statement of statements) await client.query(statement);
  });
}

/**
 * Drives the scripted brain's interview as a connector would: answers each follow-up from `answers`,
 * answers every `gofer_question` through its `reply` path with "yes", until the Gofer is
 * `ready_for_pairing`. Returns the ids of the questions answered.
 */
export async function interviewToReady(
  c: TestConnector,
  goferId: string,
  answers: string[],
): Promise<Set<string>> {
  const answered = new Set<string>();
  for (let turn = 0; turn < 14; turn++) {
    const list = await c.rest<{ goferId: string; discoveryStatus: string }[]>('GET', '/gofers');
    if (list.status !== 200)
      throw new Error(`GET /gofers answered ${list.status} ${JSON.stringify(list.body)}`);
    if (list.body.find((g) => g.goferId === goferId)?.discoveryStatus === 'ready_for_pairing')
      return answered;
    const question = c.delivered.find(
      (e: OanEventEnvelope) =>
        e.type === 'gofer_question' && e.goferId === goferId && !answered.has(e.eventId),
    );
    const before = c.delivered.length;
    if (question) {
      answered.add(question.eventId);
      await c.rest('POST', question.reply!.path.replace(/^\/api\/v1/, ''), { content: 'yes' });
    } else {
      await c.rest('POST', `/gofers/${goferId}/chat/messages`, {
        content: answers[Math.min(turn, answers.length - 1)],
      });
    }
    await waitFor(() => c.delivered.length > before, { timeoutMs: 10_000, what: `the Gofer's turn ${turn}` });
  }
  throw new Error(`Gofer ${goferId} did not reach ready_for_pairing`);
}

/** Waits for the first envelope of `type` about `goferId` among what the connector delivered. */
export const awaitEnvelope = (c: TestConnector, type: string, goferId: string) =>
  waitFor(() => c.delivered.find((e: OanEventEnvelope) => e.type === type && e.goferId === goferId), {
    timeoutMs: 30_000,
    what: `${type} for ${goferId}`,
  });

export interface Answer<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/** The two sides of the issue-4 journey: a hiring team (dsh) and an engineer (openclaw). */
export interface MatchParties {
  a: JoinedAccount;
  b: JoinedAccount;
  ca: TestConnector;
  cb: TestConnector;
  ga: string;
  gb: string;
}
export interface PairedParties extends MatchParties {
  threadId: string;
}
export interface Match extends PairedParties {
  conversationId: string;
}

/**
 * Assertions run at each point of the journey, while the state they look at still holds (e.g. the
 * unresolved digest before a decision is taken). The helper itself only insists on what it needs
 * to go on.
 */
export interface MatchChecks {
  /** Both sides got `pair_proposed`; nobody confirmed yet. */
  proposed?(p: MatchParties, pa: OanEventEnvelope, pb: OanEventEnvelope): Promise<void>;
  /** Both sides confirmed the pairing (a's answer, then b's). */
  confirmed?(p: PairedParties, answers: [Answer, Answer]): Promise<void>;
  /** The session ran; both sides got their `session_summary`. */
  summarized?(p: PairedParties, sa: OanEventEnvelope, sb: OanEventEnvelope): Promise<void>;
  /** A asked for the match; b got `match_request`, not decided yet. */
  requested?(
    p: PairedParties,
    request: Answer<{ status: string; counterpart: { id: string } }>,
    mr: OanEventEnvelope,
  ): Promise<void>;
  /**
   * B's decision just returned, before anything else happened: what B reads now must already show
   * it (read-your-writes).
   */
  answered?(m: Match, decision: Answer<{ conversationId: string }>): Promise<void>;
  /** B accepted through the envelope's reply path; both sides got `match_decided`. */
  decided?(
    m: Match,
    decision: Answer<{ conversationId: string }>,
    da: OanEventEnvelope,
    db: OanEventEnvelope,
  ): Promise<void>;
}

const need = <T>(res: Answer<T>, what: string): T => {
  if (res.status < 200 || res.status > 299) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
};

/**
 * Two fresh accounts (dsh and openclaw) whose Gofers need each other, driven as connectors through
 * their interviews until discovery proposes the pair: both connectors (connected; the caller closes
 * them, or they are closed when a step fails) and both sides' `pair_proposed`. `names` are the e-mail
 * prefixes of the two accounts (unique within the fleet).
 */
export async function proposeTwoAccounts(
  fleet: TestFleet,
  names: [string, string],
): Promise<MatchParties & { pa: OanEventEnvelope; pb: OanEventEnvelope }> {
  const [a, b] = await Promise.all([
    joinAccount(fleet.url, fleet.mailbox, `${names[0]}-${fleet.id}@example.com`, 'dsh'),
    joinAccount(fleet.url, fleet.mailbox, `${names[1]}-${fleet.id}@example.com`, 'openclaw'),
  ]);
  const ca = new TestConnector({ baseUrl: fleet.url, token: a.apiKey });
  const cb = new TestConnector({ baseUrl: fleet.url, token: b.apiKey });
  try {
    await Promise.all([ca.connect(), cb.connect()]);
    const gofer = async (c: TestConnector) =>
      need(await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' }), 'POST /gofers').goferId;
    const ga = await gofer(ca);
    const gb = await gofer(cb);
    await Promise.all([
      interviewToReady(ca, ga, [
        'We are hiring a backend engineer: remote, TypeScript, Postgres, Kafka.',
        'We are a fintech team building payment APIs, fully remote, offering equity and mentoring.',
        'Ownership, honesty, remote-first collaboration.',
        'Call you Team Scout.',
      ]),
      interviewToReady(cb, gb, [
        'I am looking for a remote backend engineering role with TypeScript and Postgres at a fintech team.',
        'I am a backend engineer with eight years of TypeScript, Postgres and Kafka building payment APIs.',
        'Remote work, ownership, honest feedback.',
        'Call you Career Scout.',
      ]),
    ]);
    const pa = await awaitEnvelope(ca, 'pair_proposed', ga);
    const pb = await awaitEnvelope(cb, 'pair_proposed', gb);
    return { a, b, ca, cb, ga, gb, pa, pb };
  } catch (err) {
    ca.close();
    cb.close();
    throw err;
  }
}

/**
 * Two fresh accounts whose Gofers need each other, driven as connectors through discovery, pairing,
 * the session and an accepted match: the flow of test/matching.e2e.test.ts. Returns both
 * connectors (connected; the caller closes them) and the conversation the match opened. `names` are
 * the e-mail prefixes of the two accounts (unique within the fleet).
 */
export async function matchTwoAccounts(
  fleet: TestFleet,
  names: [string, string] = ['team', 'eng'],
  checks: MatchChecks = {},
): Promise<Match> {
  const { pa, pb, ...parties } = await proposeTwoAccounts(fleet, names);
  const { ca, cb, ga, gb } = parties;
  try {
    await checks.proposed?.(parties, pa, pb);
    if (!pa.threadId) throw new Error(`pair_proposed without a threadId: ${JSON.stringify(pa)}`);
    const paired: PairedParties = { ...parties, threadId: pa.threadId };
    const confirm = (c: TestConnector, roleId: string) =>
      c.rest('POST', `/threads/${paired.threadId}/pair/confirm`, { roleId, accepted: true });
    const confirms: [Answer, Answer] = [await confirm(ca, ga), await confirm(cb, gb)];
    await checks.confirmed?.(paired, confirms);
    confirms.forEach((res, i) => need(res, `pair/confirm (${names[i]})`));

    const sa = await awaitEnvelope(ca, 'session_summary', ga);
    const sb = await awaitEnvelope(cb, 'session_summary', gb);
    await checks.summarized?.(paired, sa, sb);

    const request = await ca.rest<{ status: string; counterpart: { id: string } }>(
      'POST',
      '/match-requests',
      {
        threadId: paired.threadId,
        roleId: ga,
      },
    );
    need(request, 'POST /match-requests');
    const mr = await awaitEnvelope(cb, 'match_request', gb);
    await checks.requested?.(paired, request, mr);
    if (!mr.reply) throw new Error(`match_request without a reply path: ${JSON.stringify(mr)}`);
    const decision = await cb.rest<{ conversationId: string }>(
      'POST',
      mr.reply.path.replace(/^\/api\/v1/, ''),
      { accept: true },
    );
    const match: Match = { ...paired, conversationId: need(decision, 'match decision').conversationId };
    await checks.answered?.(match, decision);
    const da = await awaitEnvelope(ca, 'match_decided', ga);
    const db = await awaitEnvelope(cb, 'match_decided', gb);
    await checks.decided?.(match, decision, da, db);
    return match;
  } catch (err) {
    ca.close();
    cb.close();
    throw err;
  }
}

/**
 * The flow of `matchTwoAccounts` with the interview answers given (a's, then b's), for a second pair in
 * the same fleet: answers that share no word with another pair's keep discovery from pairing across
 * the two (both discovery filters must hit, services/matching/src/reactors/discovery.ts). Also returns
 * the id of the match request b received and accepted.
 */
export async function matchTwoAccountsSaying(
  fleet: TestFleet,
  names: [string, string],
  answers: [string[], string[]],
): Promise<Match & { requestId: string }> {
  const [a, b] = await Promise.all(
    names.map((name) => joinAccount(fleet.url, fleet.mailbox, `${name}-${fleet.id}@example.com`)),
  );
  const ca = new TestConnector({ baseUrl: fleet.url, token: a!.apiKey });
  const cb = new TestConnector({ baseUrl: fleet.url, token: b!.apiKey });
  try {
    await Promise.all([ca.connect(), cb.connect()]);
    return await matchSaying(fleet, { a: a!, b: b!, ca, cb }, answers);
  } catch (err) {
    ca.close();
    cb.close();
    throw err;
  }
}

/**
 * Two connected accounts, each with a new Gofer interviewed with the answers given, through
 * discovery, pairing, the session and an accepted match: a new conversation between accounts that
 * may already have others (a second Gofer of an account already matched). The caller owns the
 * connectors.
 */
export async function matchSaying(
  fleet: TestFleet,
  { a, b, ca, cb }: Pick<MatchParties, 'a' | 'b' | 'ca' | 'cb'>,
  answers: [string[], string[]],
): Promise<Match & { requestId: string }> {
  const gofer = async (c: TestConnector) =>
    need(await c.rest<{ goferId: string }>('POST', '/gofers', { locale: 'en' }), 'POST /gofers').goferId;
  const [ga, gb] = [await gofer(ca), await gofer(cb)];
  await Promise.all([interviewToReady(ca, ga, answers[0]), interviewToReady(cb, gb, answers[1])]);
  const { threadId } = await awaitEnvelope(ca, 'pair_proposed', ga);
  if (!threadId) throw new Error('pair_proposed without a threadId');
  for (const [c, roleId] of [
    [ca, ga],
    [cb, gb],
  ] as const) {
    need(await c.rest('POST', `/threads/${threadId}/pair/confirm`, { roleId, accepted: true }), 'confirm');
  }
  await Promise.all([awaitEnvelope(ca, 'session_summary', ga), awaitEnvelope(cb, 'session_summary', gb)]);
  need(await ca.rest('POST', '/match-requests', { threadId, roleId: ga }), 'POST /match-requests');
  const mr = await awaitEnvelope(cb, 'match_request', gb);
  const requestId = String(mr.payload.requestId);
  const decision = await cb.rest<{ conversationId: string }>(
    'POST',
    `/match-requests/${requestId}/decision`,
    {
      accept: true,
    },
  );
  const { conversationId } = need(decision, 'match decision');
  return { a, b, ca, cb, ga, gb, threadId, conversationId, requestId };
}

/** The four event stores of the fleet (services/<name>/src/infra/store.ts). */
export const EVENT_STORES = ['auth', 'gofers', 'matching', 'conversations'] as const;

/**
 * What a refused request must leave unchanged, read over one connection: each event store's row count
 * and last position (written synchronously by the request), and a digest of read.oan_event (written
 * later by the projector).
 */
export async function openStateProbe(databaseUrl: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const stores = EVENT_STORES.map(
    (s) => `(select count(*) || '/' || coalesce(max(position), 0) from "${s}".events) as "${s}"`,
  );
  const read = `(select count(*) || '/' || coalesce(md5(string_agg(account_id || ':' || seq || ':' || event_id, ','
      order by account_id, seq)), '') from read.oan_event) as oan_event`;
  const query = async (columns: string[]) =>
    (await client.query<Record<string, string>>(`select ${columns.join(', ')}`)).rows[0]!;
  return {
    /** The event stores only: what a request changes before it answers. */
    stores: () => query(stores),
    /** The stores and the projected event table. */
    all: () => query([...stores, read]),
    /** Any other reading, as one text value. */
    scalar: async (sql: string) => String(Object.values(await query([`(${sql}) as v`]))[0]),
    close: () => client.end(),
  };
}
export type StateProbe = Awaited<ReturnType<typeof openStateProbe>>;

/** A gateway process's own URL (not the edge's), to put a socket on a chosen replica. */
export const gatewayOf = (fleet: TestFleet, name: 'gateway1' | 'gateway2') =>
  `http://127.0.0.1:${fleet.plan.processes.find((p) => p.name === name)!.port}`;

/** Records the order of what a socket sees: pushes (`event:<type>:<payload.kind>`), then the disconnect reason. */
export function recordSocket(socket: Socket): string[] {
  const seen: string[] = [];
  socket.on('oan:event', (e: OanEventEnvelope) => seen.push(`event:${e.type}:${String(e.payload.kind)}`));
  socket.on('disconnect', (reason) => seen.push(`disconnect:${reason}`));
  return seen;
}

/** `npm run ban -- <accountId>` against the fleet, as an operator runs it. */
export function banAccount(fleet: TestFleet, accountId: string): void {
  execFileSync(process.execPath, ['services/auth/src/cli/ban.ts', accountId], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...fleet.env },
    stdio: 'pipe',
  });
}

/** A pair that needs each other and shares no word with matchTwoAccounts' fintech pair. */
export const WEDDING: [string[], string[]] = [
  [
    'We want a wedding photographer in Lisbon for a June ceremony: candid portraits and a printed album.',
    'A couple planning a small seaside wedding in Lisbon with sixty guests, candid portraits wanted.',
    'Warmth, punctuality, creativity.',
    'Call you Vow Finder.',
  ],
  [
    'I want wedding photography gigs in Lisbon: ceremonies, candid portraits, printed albums.',
    'A wedding photographer in Lisbon shooting candid portraits, ceremony coverage and printed albums.',
    'Warmth, punctuality, creativity.',
    'Call you Lens Finder.',
  ],
];

/** The command line a running process was started with (Linux's /proc), one argument per item. */
export function argvOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
}
