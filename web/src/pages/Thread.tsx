/* eslint-disable max-lines -- Longer than most pages on purpose: one thread's page shows its
 * pairing card, the session, the pair confirmation and the match request, each of which changes
 * live with the same event stream.
 */
import { useState } from 'preact/hooks';
import { api, need, type Envelope, type PairingCard, type Thread } from '../api/client';
import { ErrorLine, when } from '../components/Layout';
import { live, useEventCount, useLive } from '../live';
import { useLoad } from '../useLoad';
import type { Session } from '../session';
import { useSignedUrls } from '../signedUrls';
import { useAction } from '../useAction';

interface SummaryPayload {
  cardTitle?: string;
  summary?: string;
  content?: string;
  opponentRoleName?: string;
  otherPartyHighlights?: unknown;
  matchRecommendation?: unknown;
  photos?: { attachmentId: string }[];
  documents?: { attachmentId: string; name: string; mimeType: string; size: number }[];
}

const text = (v: unknown): string =>
  typeof v === 'string' ? v : Array.isArray(v) ? v.map(text).join('; ') : v == null ? '' : JSON.stringify(v);

/** The thread's page (`/threads/:id`, the webUrl of pair_proposed and session_summary). */
export function ThreadPage({ threadId, session: _session }: { threadId: string; session: Session }) {
  const [thread, setThread] = useState<Thread | null>(null);
  const [card, setCard] = useState<PairingCard | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { events, unresolved } = useLive();
  const changes = useEventCount((e) => e.threadId === threadId);

  const load = useLoad(
    async (latest) => {
      try {
        const t = need(
          await api.GET('/api/v1/threads/{id}', { params: { path: { id: threadId } } }),
          'thread',
        );
        if (!latest()) return;
        setThread(t);
        const mine = t.participants.find((p) => p.isMine);
        if (mine) {
          const res = await api.GET('/api/v1/gofers/{goferId}/pairings/{threadId}', {
            params: { path: { goferId: mine.roleId, threadId } },
          });
          if (latest()) setCard(res.response.ok ? (res.data ?? null) : null);
        }
      } catch (err) {
        if (latest()) setError((err as Error).message);
      }
    },
    [threadId, changes],
  );

  if (!thread)
    return (
      <>
        <h1 tabIndex={-1}>{error ? 'Thread not available' : 'Loading…'}</h1>
        <ErrorLine error={error} />
      </>
    );
  const mine = thread.participants.find((p) => p.isMine);
  const other = thread.participants.find((p) => !p.isMine);
  const ofThread = events.filter((e) => e.threadId === threadId);
  const summary = [...ofThread].reverse().find((e) => e.type === 'session_summary');
  const toConfirm = unresolved.events.find((e) => e.type === 'pair_proposed' && e.threadId === threadId);
  return (
    <>
      <h1 tabIndex={-1}>
        {mine?.name ?? 'Your Gofer'} and {other?.name ?? 'a counterpart'}
      </h1>
      <p class="muted">
        Pairing {thread.status.replace(/_/g, ' ')} · since {when(thread.createdAt)}
      </p>
      <ErrorLine error={error} />
      {toConfirm && mine ? <Confirm threadId={threadId} roleId={mine.roleId} onDone={load} /> : null}
      {summary ? <SummaryCard threadId={threadId} envelope={summary} /> : <CardFallback card={card} />}
      {mine ? <Match threadId={threadId} roleId={mine.roleId} events={ofThread} /> : null}
    </>
  );
}

function CardFallback({ card }: { card: PairingCard | null }) {
  return (
    <section aria-labelledby="summary">
      <h2 id="summary">Summary</h2>
      {card?.summaryPreview ? (
        <p>{card.summaryPreview}</p>
      ) : (
        <p>The summary is not ready yet: the Gofers are still talking.</p>
      )}
    </section>
  );
}

function SummaryCard({ threadId, envelope }: { threadId: string; envelope: Envelope }) {
  const p = envelope.payload as SummaryPayload;
  const photos = p.photos ?? [];
  const documents = p.documents ?? [];
  const urls = useSignedUrls(
    threadId,
    [...photos, ...documents].map((a) => a.attachmentId),
  );
  return (
    <section aria-labelledby="summary" class="card summary">
      <h2 id="summary">{p.cardTitle ?? 'Session summary'}</h2>
      {p.opponentRoleName ? (
        <p>
          With <strong>{p.opponentRoleName}</strong>
        </p>
      ) : null}
      <p class="prose">{p.summary ?? p.content ?? ''}</p>
      {p.otherPartyHighlights ? <p>Highlights: {text(p.otherPartyHighlights)}</p> : null}
      {p.matchRecommendation ? <p>Recommendation: {text(p.matchRecommendation)}</p> : null}
      {photos.length > 0 ? (
        <ul class="photos" aria-label="Photos">
          {photos.map((ph, i) => (
            <li key={ph.attachmentId}>
              {urls[ph.attachmentId] ? (
                <img
                  src={urls[ph.attachmentId]}
                  alt={`Photo ${i + 1} of ${p.opponentRoleName ?? 'the counterpart'}`}
                />
              ) : (
                <span>Photo {i + 1} not available</span>
              )}
            </li>
          ))}
        </ul>
      ) : null}
      {documents.length > 0 ? (
        <ul class="documents" aria-label="Documents">
          {documents.map((d) => (
            <li key={d.attachmentId}>
              {urls[d.attachmentId] ? (
                <a href={urls[d.attachmentId]} target="_blank" rel="noopener noreferrer">
                  {d.name}
                </a>
              ) : (
                <span>{d.name}</span>
              )}{' '}
              <span class="muted">({Math.ceil(d.size / 1024)} KB)</span>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function Confirm({
  threadId,
  roleId,
  onDone,
}: {
  threadId: string;
  roleId: string;
  onDone: () => Promise<void>;
}) {
  const { busy, error, run } = useAction();
  const answer = (accepted: boolean) =>
    run(async () => {
      const res = await api.POST('/api/v1/threads/{id}/pair/confirm', {
        params: { path: { id: threadId } },
        body: { roleId, accepted },
      });
      // "not waiting for confirmation" (from pair/confirm) means it is already settled.
      const err = res.error as { error?: string } | undefined;
      if (!res.response.ok && !err?.error?.includes('Thread is not waiting for confirmation'))
        need(res, 'confirm');
      await live.refresh();
      await onDone();
    });
  return (
    <section aria-labelledby="confirm" class="callout">
      <h2 id="confirm">Confirm this pairing?</h2>
      <p>Your Gofer will talk with the other side's Gofer and write you a summary.</p>
      <button type="button" disabled={busy} onClick={() => void answer(true)}>
        Confirm pairing
      </button>{' '}
      <button type="button" disabled={busy} onClick={() => void answer(false)}>
        Decline
      </button>
      <ErrorLine error={error} />
    </section>
  );
}

type MatchStatus = { status: string; conversationId: string | null; counterpart: { name: string } };

/** Ask for the match, or decide one asked of us; the decision comes back as match_decided. */
function Match({ threadId, roleId, events }: { threadId: string; roleId: string; events: Envelope[] }) {
  const [asked, setAsked] = useState<MatchStatus | null>(null);
  const { busy, error, run } = useAction();
  const decided = [...events].reverse().find((e) => e.type === 'match_decided');
  const requestOf = (e: Envelope) => {
    const id = e.payload.requestId;
    return typeof id === 'string' ? id : '';
  };
  const incoming = events.find(
    (e) =>
      e.type === 'match_request' &&
      !events.some((d) => d.type === 'match_decided' && requestOf(d) === requestOf(e)),
  );
  const act = (work: () => Promise<void>) =>
    run(async () => {
      await work();
      await live.refresh();
    });
  const request = () =>
    act(async () => {
      setAsked(
        need(await api.POST('/api/v1/match-requests', { body: { threadId, roleId } }), 'match request'),
      );
    });
  const decide = (requestId: string, accept: boolean) =>
    act(async () => {
      need(
        await api.POST('/api/v1/match-requests/{requestId}/decision', {
          params: { path: { requestId } },
          body: { accept },
        }),
        'decision',
      );
    });

  let body;
  if (decided) {
    const d = decided.payload as { status?: string; conversationId?: string | null };
    body =
      d.status === 'accepted' ? (
        <p role="status">
          Matched.{' '}
          {d.conversationId ? (
            <a href={`/conversations/${encodeURIComponent(d.conversationId)}`}>Open the conversation</a>
          ) : null}
        </p>
      ) : (
        <p role="status">The match request was declined.</p>
      );
  } else if (incoming) {
    const p = incoming.payload as { counterpartRoleName?: string };
    body = (
      <>
        <p>
          {p.counterpartRoleName ?? 'The other side'} asks for a match. Accepting opens a direct conversation.
        </p>
        <button type="button" disabled={busy} onClick={() => void decide(requestOf(incoming), true)}>
          Accept match
        </button>{' '}
        <button type="button" disabled={busy} onClick={() => void decide(requestOf(incoming), false)}>
          Decline match
        </button>
      </>
    );
  } else if (asked && asked.status !== 'none') {
    body = (
      <p role="status">
        {asked.status === 'matched'
          ? 'Matched.'
          : asked.status === 'outgoing_pending'
            ? `Match requested: waiting for ${asked.counterpart.name} to decide.`
            : `${asked.counterpart.name} already asked you: decide above.`}
        {asked.conversationId ? (
          <>
            {' '}
            <a href={`/conversations/${encodeURIComponent(asked.conversationId)}`}>Open the conversation</a>
          </>
        ) : null}
      </p>
    );
  } else {
    body = (
      <button type="button" disabled={busy} onClick={() => void request()}>
        Request a match
      </button>
    );
  }
  return (
    <section aria-labelledby="match">
      <h2 id="match">Match</h2>
      {body}
      <ErrorLine error={error} />
    </section>
  );
}
