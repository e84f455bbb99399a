import { useState } from 'preact/hooks';
import { api, need, type ConversationMessage, type Envelope } from '../api/client';
import { Composer } from '../components/Composer';
import { ErrorLine, when } from '../components/Layout';
import { useEventCount, useLive } from '../live';
import { useLoad } from '../useLoad';
import type { Session } from '../session';

interface ConversationRef {
  conversationId: string;
  threadId?: string;
  counterpart: string;
  at: string;
}

/** The account's conversations: every accepted match_decided (there is no listing route in v1). */
function conversationsOf(events: readonly Envelope[]): ConversationRef[] {
  const names = new Map<string, string>();
  for (const e of events) {
    const n = (e.payload as { counterpartRoleName?: unknown }).counterpartRoleName;
    if (e.threadId && typeof n === 'string' && n) names.set(e.threadId, n);
  }
  const out = new Map<string, ConversationRef>();
  for (const e of events) {
    const p = e.payload as { status?: string; conversationId?: string | null };
    if (e.type !== 'match_decided' || p.status !== 'accepted' || !p.conversationId) continue;
    out.set(p.conversationId, {
      conversationId: p.conversationId,
      ...(e.threadId ? { threadId: e.threadId } : {}),
      counterpart: (e.threadId && names.get(e.threadId)) || 'your match',
      at: e.createdAt,
    });
  }
  return [...out.values()].reverse();
}

export function ConversationsPage() {
  const { events } = useLive();
  const list = conversationsOf(events);
  return (
    <>
      <h1 tabIndex={-1}>Conversations</h1>
      {list.length === 0 ? (
        <p>No conversations yet: one opens when a match is accepted.</p>
      ) : (
        <ul class="list">
          {list.map((c) => (
            <li key={c.conversationId}>
              <a href={`/conversations/${encodeURIComponent(c.conversationId)}`}>With {c.counterpart}</a>{' '}
              <span class="muted">since {when(c.at)}</span>
              {c.threadId ? (
                <>
                  {' · '}
                  <a href={`/threads/${encodeURIComponent(c.threadId)}`}>the pairing</a>
                </>
              ) : null}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The conversation's messages, refetched when a relay_message of this conversation arrives; sending. */
export function ConversationPage({ conversationId, session }: { conversationId: string; session: Session }) {
  const [messages, setMessages] = useState<ConversationMessage[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { events } = useLive();
  const changes = useEventCount((e) => e.conversationId === conversationId);
  const ref = conversationsOf(events).find((c) => c.conversationId === conversationId);
  const path = { conversationId };

  const load = useLoad(
    async (latest) => {
      try {
        const read = need(
          await api.GET('/api/v1/conversations/{conversationId}/messages', {
            params: { path, query: { limit: '200' } },
          }),
          'messages',
        );
        if (latest()) setMessages(read);
      } catch (err) {
        if (latest()) setError((err as Error).message);
      }
    },
    [conversationId, changes],
  );

  const post = async (content: string) =>
    need(
      await api.POST('/api/v1/conversations/{conversationId}/messages', {
        params: { path },
        body: { content },
      }),
      'send',
    );
  const open = async (attachmentId: string) => {
    const res = await api.GET('/api/v1/conversations/{conversationId}/attachments/{attachmentId}/url', {
      params: { path: { conversationId, attachmentId } },
    });
    if (res.data?.url) window.open(res.data.url, '_blank', 'noopener,noreferrer');
    else setError('That file was deleted.');
  };

  return (
    <>
      <h1 tabIndex={-1}>Conversation with {ref?.counterpart ?? 'your match'}</h1>
      <ErrorLine error={error} />
      {messages === null ? (
        <p>Loading…</p>
      ) : (
        <ol class="chat" aria-live="polite" aria-label="Messages" tabIndex={0}>
          {messages.length === 0 ? <li class="muted">No messages yet. Say hello.</li> : null}
          {messages.map((m) => (
            <li key={m.id} class={`msg ${m.senderUserId === session.userId ? 'msg-user' : 'msg-assistant'}`}>
              <span class="from">
                {m.senderUserId === session.userId ? 'You' : (ref?.counterpart ?? 'Them')}
              </span>
              <span class="text">{m.content}</span>
              {m.attachments.map((a) => (
                <button
                  type="button"
                  class="link file"
                  key={a.attachmentId}
                  onClick={() => void open(a.attachmentId)}
                >
                  {a.kind === 'photo' ? 'Photo' : 'Document'}: {a.name}
                </button>
              ))}
              <time dateTime={m.createdAt}>{when(m.createdAt)}</time>
            </li>
          ))}
        </ol>
      )}
      <Composer id="conv-text" label="Message" post={post} onSent={load} />
    </>
  );
}
