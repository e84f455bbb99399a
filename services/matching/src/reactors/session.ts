import { bannedAmong } from '@oan/auth';
import { goferFiles, goferProfile } from '@oan/readmodels';
import { awaitOwnWrites, type WriteSource } from '@oan/projection';
import {
  reactor,
  type KafkaHandle,
  type LogSink,
  type RunningReactor,
  type SchemaRegistry,
} from '@oan/kafka';
import { loadThread, runThreadCommand, type MatchingContext } from '../commands/context.ts';
import type { PublicProfile } from '../domain/discovery.ts';
import type { SessionTurnAdded, ThreadEvent, ThreadSide } from '@oan/domain';
import { SCRIPTED_TURNS, openerOf, type ScriptedTurn, type SessionParty } from '../domain/scriptedSession.ts';
import type { RecordSummaryCard } from '../domain/summaryCard.ts';
import { strings } from '../infra/discoveryIndex.ts';
import { sessionMetrics } from '../sessionProviders/metrics.ts';
import type { SessionProvider, SessionTranscriptTurn } from '../sessionProviders/provider.ts';
import { ScriptedSessionProvider } from '../sessionProviders/scripted.ts';

export interface SessionDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: MatchingContext;
  logger: LogSink;
  topicPrefix: string;
  /** The session's provider (main.ts: `createSessionProvider(config)`); scripted when omitted. */
  provider?: SessionProvider;
}

export interface RunSessionOptions {
  logger?: LogSink | undefined;
  /** Scripted when omitted. */
  provider?: SessionProvider | undefined;
  /** Attempts per turn or card before the run gives up (the thread stays where it is). Default 3. */
  attempts?: number | undefined;
  /** The first pause between attempts, doubled each time. Default 250 ms. */
  backoffMs?: number | undefined;
}

/** A session step that failed every attempt: counted, and the thread left where it is. */
export class SessionGenerationError extends Error {
  override readonly name = 'SessionGenerationError';
}

const defaultProvider = new ScriptedSessionProvider();
/** The gofers store's read-your-writes source: the Gofers' profiles and files a session reads. */
const GOFERS_SOURCE: WriteSource = 'gofers';

async function withRetries<T>(
  step: 'turn' | 'card',
  opts: RunSessionOptions,
  provider: SessionProvider,
  context: Record<string, unknown>,
  run: () => Promise<T>,
): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? 3);
  const backoff = opts.backoffMs ?? 250;
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, backoff * 2 ** (i - 1)));
    try {
      return await run();
    } catch (err) {
      last = err;
      // Names and codes only: a message may quote profile text.
      opts.logger?.warn(
        { ...context, step, attempt: i + 1, err: err instanceof Error ? err.name : typeof err },
        'session step failed',
      );
    }
  }
  sessionMetrics.failures.inc({ provider: provider.kind, step });
  throw new SessionGenerationError(`session ${step} failed after ${attempts} attempts`, { cause: last });
}

/** The transcript as `self` sees it: its own turns and the counterpart's. */
const seenBy = (transcript: readonly ScriptedTurn[], selfId: string): SessionTranscriptTurn[] =>
  transcript.map((t) => ({
    turnIndex: t.turnIndex,
    speaker: t.senderGoferId === selfId ? 'self' : 'counterpart',
    content: t.content,
  }));

/** A side's public profile from the Gofer read model; null when the Gofer is deleted. */
async function partyOf(ctx: MatchingContext, s: ThreadSide): Promise<SessionParty | null> {
  const row = await goferProfile(ctx.orm.em.fork(), s.goferId);
  if (row?.deletedAt) return null;
  // Not projected yet: the snapshot's name, nothing else (the script still quotes only public data).
  const profile: PublicProfile = row
    ? {
        name: row.name,
        description: row.description,
        values: strings(row.values),
        demands: strings(row.demands),
      }
    : { name: s.name, description: '', values: [], demands: [] };
  return { goferId: s.goferId, profile };
}

/** Every live photo and document of the counterpart's Gofer (being paired shares them all). */
async function assetsOf(
  ctx: MatchingContext,
  goferId: string,
): Promise<Pick<RecordSummaryCard, 'photos' | 'documents'>> {
  const rows = await goferFiles(ctx.orm.em.fork(), goferId);
  const photos: RecordSummaryCard['photos'] = [];
  const documents: RecordSummaryCard['documents'] = [];
  for (const r of rows) {
    if (r.kind === 'photo') {
      photos.push({
        attachmentId: r.id,
        ...(r.width !== null ? { width: r.width } : {}),
        ...(r.height !== null ? { height: r.height } : {}),
      });
    } else {
      documents.push({ attachmentId: r.id, name: r.name, mimeType: r.mimeType, size: Number(r.size) });
    }
  }
  return { photos, documents };
}

const transcriptOf = (events: ThreadEvent[]): ScriptedTurn[] =>
  events
    .filter((e): e is { type: 'SessionTurnAdded'; data: SessionTurnAdded } => e.type === 'SessionTurnAdded')
    .map(({ data }) => ({
      turnIndex: data.turnIndex,
      senderGoferId: data.senderGoferId,
      content: data.content,
    }));

/**
 * Runs one activated thread's session to its cards, through the provider (scripted by default):
 * each side speaks with its own profile, the counterpart's public fields and the transcript. Every
 * step is idempotent on the stream (turns by `turnIndex`, `SessionEnded` once, a card only when its
 * content changed — and, for a non-deterministic provider, only when the side has none yet), so a
 * redelivered `ThreadActivated` resumes where the last run stopped. A closed thread (rejected, a
 * Gofer deleted, an account banned) stops it: nothing more is appended; a side found banned before a
 * step closes the thread first. A step that fails every attempt is counted
 * (`oan_session_generation_failures_total`) and throws `SessionGenerationError`, appending nothing:
 * the reactor's redelivery (or a later run) continues from the same turn.
 */
export async function runSession(
  ctx: MatchingContext,
  threadId: string,
  opts: RunSessionOptions = {},
): Promise<void> {
  const provider = opts.provider ?? defaultProvider;
  const { state, events: before } = await loadThread(ctx, threadId);
  if (state.status !== 'active' && state.status !== 'session_ended') return;
  // Each side's profile and files come from the gofers read model. Wait (bounded) until it holds
  // every gofers write each owner made before this run — an upload answered 201 just before the
  // pairing was confirmed is on the card, not left behind by the projector's lag.
  await Promise.all(
    [...new Set([state.a.accountId, state.b.accountId])].map((accountId) =>
      awaitOwnWrites(ctx.orm, ctx.writes.tracker, accountId, [GOFERS_SOURCE]),
    ),
  );
  const [a, b] = await Promise.all([partyOf(ctx, state.a), partyOf(ctx, state.b)]);
  // A deleted side: the GoferDeleted reactor closes the thread; nothing is said for it meanwhile.
  if (!a || !b) return;
  const callers = [state.a.accountId, state.b.accountId];
  const sides = [state.a, state.b];
  if (state.status === 'active') {
    // Side `opener` (the lower goferId) speaks the even turns.
    const [opener, responder] = openerOf(a, b);
    const transcript = transcriptOf(before);
    for (let turnIndex = state.turnCount; turnIndex < SCRIPTED_TURNS; turnIndex++) {
      if (await bannedSideClosed(ctx, threadId, sides)) return;
      const opens = turnIndex % 2 === 0;
      const [self, other] = opens ? [opener, responder] : [responder, opener];
      // The counterpart's public fields only; its words are data, never followed.
      const { content } = await withRetries('turn', opts, provider, { threadId, turnIndex }, () =>
        provider.nextTurn({
          self: { goferId: self.goferId, profile: self.profile },
          counterpart: publicFields(other),
          transcript: seenBy(transcript, self.goferId),
          turnIndex,
          totalTurns: SCRIPTED_TURNS,
          opens,
        }),
      );
      const turn = { turnIndex, senderGoferId: self.goferId, content };
      const r = await runThreadCommand(ctx, threadId, { type: 'AddSessionTurn', data: turn }, callers);
      if (r.state.status !== 'active') return;
      transcript.push(turn);
    }
    if (await bannedSideClosed(ctx, threadId, sides)) return;
    const ended = await runThreadCommand(ctx, threadId, { type: 'EndSession', data: {} }, callers);
    if (ended.state.status !== 'session_ended') return;
  }
  const { state: now, events } = await loadThread(ctx, threadId);
  if (now.status !== 'session_ended') return;
  const transcript = transcriptOf(events);
  for (const [self, other] of [
    [a, b],
    [b, a],
  ] as const) {
    // A model's card differs on every call: regenerating it on a redelivery would version it forever.
    if (!provider.deterministic && now.cards.has(self.goferId)) continue;
    if (await bannedSideClosed(ctx, threadId, sides)) return;
    const assets = await assetsOf(ctx, other.goferId);
    const card = await withRetries('card', opts, provider, { threadId, goferId: self.goferId }, () =>
      provider.summaryCard({
        self: { goferId: self.goferId, profile: self.profile },
        counterpart: publicFields(other),
        transcript: seenBy(transcript, self.goferId),
      }),
    );
    const r = await runThreadCommand(
      ctx,
      threadId,
      { type: 'RecordSummaryCard', data: { goferId: self.goferId, card, ...assets, patchKind: null } },
      callers,
    );
    if (r.state.status === 'closed') return;
  }
  opts.logger?.info(
    { threadId, turns: transcript.length, provider: provider.kind },
    'session ended with its cards',
  );
}

/**
 * Whether a side of the thread is banned now; if so the thread is closed for it (the counterpart
 * sees an ordinary close) and the session says nothing more. The ban's own reactor closes it too;
 * this check stops a run already under way without waiting for that.
 */
async function bannedSideClosed(ctx: MatchingContext, threadId: string, sides: readonly ThreadSide[]) {
  const banned = await bannedAmong(
    ctx.orm.em.fork(),
    sides.map((s) => s.accountId),
  );
  for (const accountId of banned)
    await runThreadCommand(ctx, threadId, { type: 'CloseForBannedAccount', data: { accountId } });
  return banned.size > 0;
}

/** The counterpart's public profile fields, and nothing else of it. */
const publicFields = (p: SessionParty) => ({
  name: p.profile.name,
  description: p.profile.description,
  values: [...p.profile.values],
  demands: [...p.profile.demands],
});

/** Session reactor (group `<prefix>matching.session` on `<prefix>matching.events`). */
export async function startSession(deps: SessionDeps): Promise<RunningReactor> {
  return reactor<ThreadEvent>({
    kafka: deps.kafka,
    registry: deps.registry,
    logger: deps.logger,
    group: `${deps.topicPrefix}matching.session`,
    topic: `${deps.topicPrefix}matching.events`,
    on: {
      ThreadActivated: ({ data }) =>
        runSession(deps.ctx, data.threadId, { logger: deps.logger, provider: deps.provider }),
    },
  });
}
