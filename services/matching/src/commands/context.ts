import { sql, type EntityManager, type MikroORM } from '@oan/db';
import { commandHandler, type CommandHandler, type EventStore, type StoredEvent } from '@oan/eventstore';
import { NotFoundError } from '../domain/errors.ts';
import { threadStreamId, type ThreadEvent } from '@oan/domain';
import { threadDecider, type ThreadCommand } from '../domain/thread.ts';
import {
  evolveThread,
  initialThreadState,
  type ExistingThread,
  type ThreadState,
} from '../domain/threadState.ts';
import type { ThreadWrites } from './writes.ts';

/** What every command handler and route of the matching service needs. */
export interface MatchingContext {
  orm: MikroORM;
  /** `EventStore('matching', avroEventValidator(registry))` (src/infra/store.ts). */
  store: EventStore;
  /** Records each command's last position so the writers' next reads wait for the projector. */
  writes: ThreadWrites;
  now: () => Date;
  /** Fresh ids (randomUUID) for match requests. */
  ids: () => string;
  /** ID_SECRET: keys the id of a new pair's thread (src/commands/threadIds.ts). */
  idSecret: string;
}

/** An id that can exist (UUIDs); anything else is answered as unknown without a query. */
export const plausibleId = (id: string) => /^[A-Za-z0-9_-]{1,128}$/.test(id);

const threadNotFound = () => new NotFoundError('THREAD_NOT_FOUND', 'Thread not found');

/** The Kafka key of a thread's events: side `a`'s account (`threadKey`), from the state or the proposal. */
function keyAccountOf(state: ThreadState, events: readonly ThreadEvent[]): string {
  if (state.status !== 'none') return state.a.accountId;
  const proposal = events.find((e) => e.type === 'ThreadProposed');
  if (!proposal) throw new Error('The first event of a thread must be ThreadProposed');
  return proposal.data.a.accountId;
}

/**
 * The write side's lookups, in the append's transaction: a request id or a Gofer finds its thread
 * without waiting for a read model (docs/adr/0012).
 */
async function recordLookups(em: EntityManager, store: EventStore, appended: StoredEvent[]): Promise<void> {
  for (const stored of appended) {
    const event = { type: stored.type, data: stored.data } as ThreadEvent;
    if (event.type === 'ThreadProposed') {
      const { threadId, a, b } = event.data;
      await sql(
        em,
        `insert into "${store.schema}".gofer_threads (gofer_id, thread_id, account_id)
         values (?, ?, ?), (?, ?, ?) on conflict do nothing`,
        [a.goferId, threadId, a.accountId, b.goferId, threadId, b.accountId],
      );
    } else if (event.type === 'MatchRequested') {
      await sql(
        em,
        `insert into "${store.schema}".request_threads (request_id, thread_id) values (?, ?)
         on conflict do nothing`,
        [event.data.requestId, event.data.threadId],
      );
    }
  }
}

/**
 * The thread aggregate's command handler: load → fold → decide → append on `thread-<threadId>`
 * (optimistic concurrency: a racing command re-runs on the new state), the lookups inline, then the
 * positions for read-your-writes: under the key account, and for each caller that is not the key
 * (src/commands/writes.ts).
 */
export const threadCommands = (ctx: MatchingContext): CommandHandler<ThreadState, ThreadCommand> =>
  commandHandler({
    orm: ctx.orm,
    store: ctx.store,
    decider: threadDecider,
    now: ctx.now,
    partitionKey: keyAccountOf,
    inline: (em, appended) => recordLookups(em, ctx.store, appended),
    remember: (last, callers) => ctx.writes.remember(last.partitionKey, last.position, callers),
  });

/**
 * One command on a thread through `threadCommands`, once its id is one the command can address;
 * `accountIds` are the callers whose reads wait for it.
 */
export async function runThreadCommand(
  ctx: MatchingContext,
  threadId: string,
  command: ThreadCommand,
  accountIds: readonly string[] = [],
  /** An internal caller's command id: the command runs once however often it is sent. */
  commandId?: string,
): Promise<{ state: ThreadState; appended: StoredEvent[] }> {
  if (command.type === 'ProposePairing') {
    // The proposal names its thread: it must be the stream it is appended to (proposePairing
    // chooses the pair's id, src/commands/threadIds.ts).
    if (threadId !== command.data.threadId) throw new Error('threadId is not the proposal’s thread');
  } else if (!plausibleId(threadId)) {
    // An id that cannot exist is unknown; it never reaches a query (or a stream name).
    throw threadNotFound();
  }
  return threadCommands(ctx)(threadStreamId(threadId), command, {
    callers: accountIds,
    ...(commandId === undefined ? {} : { commandId }),
  });
}

/**
 * One closing command (a deleted Gofer, a banned account) sent to each thread in turn, in the order
 * given; the ids of the threads it closed. An already closed thread appends nothing and is left out.
 */
export async function closeEach(
  ctx: MatchingContext,
  threadIds: Iterable<string>,
  command: Extract<ThreadCommand, { type: 'CloseForDeletedGofer' | 'CloseForBannedAccount' }>,
): Promise<string[]> {
  const closed: string[] = [];
  for (const threadId of threadIds) {
    const { appended } = await runThreadCommand(ctx, threadId, command);
    if (appended.length > 0) closed.push(threadId);
  }
  return closed;
}

/** The thread as its stream says now (the aggregate; never a read model): events and folded state. */
export async function loadThread(
  ctx: Pick<MatchingContext, 'orm' | 'store'>,
  threadId: string,
): Promise<{ state: ThreadState; events: ThreadEvent[] }> {
  if (!plausibleId(threadId)) return { state: initialThreadState(), events: [] };
  const stored = await ctx.store.readStream(ctx.orm.em.fork(), threadStreamId(threadId));
  const events = stored.map((e) => ({ type: e.type, data: e.data }) as ThreadEvent);
  return { state: events.reduce(evolveThread, initialThreadState()), events };
}

/** The events that set what the thread list shows (sides, mode, status); turns, cards and requests do not. */
const LIST_EVENTS = ['ThreadProposed', 'ThreadActivated', 'SessionEnded', 'ThreadClosed'] as const;

/**
 * One page of the threads `accountId`'s Gofers are in, newest proposal first (then by id), folded
 * from their streams: the inline `gofer_threads` lookup picks the page, and only the events that set
 * the listed fields are read, so the cost is bounded by the page, not by the account's history.
 */
export async function loadAccountThreads(
  ctx: Pick<MatchingContext, 'orm' | 'store'>,
  accountId: string,
  page: { limit: number; offset: number },
): Promise<ExistingThread[]> {
  const s = ctx.store.schema;
  const rows = await sql<{ stream_id: string; type: string; data: unknown }>(
    ctx.orm.em.fork(),
    `with page as (
       select p.stream_id, p.data->>'proposedAt' as proposed_at, g.thread_id
         from "${s}".gofer_threads g
         join "${s}".events p on p.stream_id = 'thread-' || g.thread_id and p.type = 'ThreadProposed'
        where g.account_id = ?
        order by proposed_at desc, g.thread_id
        limit ? offset ?)
     select e.stream_id, e.type, e.data
       from page join "${s}".events e on e.stream_id = page.stream_id
      where e.type in (select value from jsonb_array_elements_text(?::jsonb))
      order by page.proposed_at desc, page.thread_id, e.stream_version`,
    [accountId, page.limit, page.offset, JSON.stringify(LIST_EVENTS)],
  );
  const states = new Map<string, ThreadState>();
  for (const r of rows) {
    const state = states.get(r.stream_id) ?? initialThreadState();
    states.set(r.stream_id, evolveThread(state, { type: r.type, data: r.data } as ThreadEvent));
  }
  return [...states.values()].filter((s): s is ExistingThread => s.status !== 'none');
}
