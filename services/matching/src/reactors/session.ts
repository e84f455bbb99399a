import { sql } from '@oan/db';
import type { KafkaHandle, Logger, SchemaRegistry } from '@oan/log';
import { loadThread, runThreadCommand, type MatchingContext } from '../commands/context';
import type { PublicProfile } from '../domain/discovery';
import type { SessionTurnAdded, ThreadEvent, ThreadSide } from '../domain/events';
import { scriptSession, summarizeSession, type ScriptedTurn, type SessionParty } from '../domain/session';
import type { RecordSummaryCard } from '../domain/summaryCard';
import { strings } from '../infra/discoveryIndex';
import { startReactorLoop, type RunningReactor } from './consume';

export interface SessionDeps {
  kafka: KafkaHandle;
  registry: SchemaRegistry;
  ctx: MatchingContext;
  logger: Logger;
  topicPrefix: string;
}

/** A side's public profile from `read.gofers`; null when the Gofer is deleted. */
async function partyOf(ctx: MatchingContext, s: ThreadSide): Promise<SessionParty | null> {
  const [row] = await sql<{
    name: string;
    description: string;
    values: unknown;
    demands: unknown;
    deleted_at: Date | null;
  }>(
    ctx.orm.em.fork(),
    'select name, description, "values", demands, deleted_at from read.gofers where id = ?',
    [s.goferId],
  );
  if (row?.deleted_at) return null;
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

/** Every live photo and document of the counterpart's Gofer (§8.7: being paired shares them all). */
async function assetsOf(
  ctx: MatchingContext,
  goferId: string,
): Promise<Pick<RecordSummaryCard, 'photos' | 'documents'>> {
  const rows = await sql<{
    id: string;
    kind: string;
    name: string;
    mime_type: string;
    size: string | number;
    width: number | null;
    height: number | null;
  }>(
    ctx.orm.em.fork(),
    `select id, kind, name, mime_type, size, width, height from read.gofer_attachments
      where gofer_id = ? and deleted_at is null order by created_at, id`,
    [goferId],
  );
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
      documents.push({ attachmentId: r.id, name: r.name, mimeType: r.mime_type, size: Number(r.size) });
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
 * Runs one activated thread's scripted session to its cards. Every step is idempotent on the
 * stream (turns by `turnIndex`, `SessionEnded` once, a card only when its content changed), so a
 * redelivered `ThreadActivated` resumes where the last run stopped. A closed thread (rejected, a
 * Gofer deleted) stops it: nothing more is appended.
 */
export async function runSession(ctx: MatchingContext, threadId: string, logger?: Logger): Promise<void> {
  const { state } = await loadThread(ctx, threadId);
  if (state.status !== 'active' && state.status !== 'session_ended') return;
  const [a, b] = await Promise.all([partyOf(ctx, state.a), partyOf(ctx, state.b)]);
  // A deleted side: the GoferDeleted reactor closes the thread; nothing is said for it meanwhile.
  if (!a || !b) return;
  const callers = [state.a.accountId, state.b.accountId];
  if (state.status === 'active') {
    // The counterpart's profile is quoted as data by the script, never followed (§4.5).
    for (const turn of scriptSession(a, b)) {
      if (turn.turnIndex < state.turnCount) continue;
      const r = await runThreadCommand(ctx, threadId, { type: 'AddSessionTurn', data: turn }, callers);
      if (r.state.status !== 'active') return;
    }
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
    const assets = await assetsOf(ctx, other.goferId);
    const card = summarizeSession(transcript, self, other);
    const r = await runThreadCommand(
      ctx,
      threadId,
      { type: 'RecordSummaryCard', data: { goferId: self.goferId, card, ...assets, patchKind: null } },
      callers,
    );
    if (r.state.status === 'closed') return;
  }
  logger?.info({ threadId, turns: transcript.length }, 'session ended with its cards');
}

/** Session reactor (group `<prefix>matching.session` on `<prefix>matching.events`). */
export async function startSession(deps: SessionDeps): Promise<RunningReactor> {
  return startReactorLoop({
    kafka: deps.kafka,
    registry: deps.registry,
    logger: deps.logger,
    groupId: `${deps.topicPrefix}matching.session`,
    topic: `${deps.topicPrefix}matching.events`,
    types: new Set(['ThreadActivated']),
    handle: (record) => runSession(deps.ctx, String(record.data.threadId), deps.logger),
  });
}
