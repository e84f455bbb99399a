import { useState } from 'preact/hooks';
import { api, need, type ConversationMessage, type Envelope } from '../api/client';
import { Composer } from '../components/Composer';
import { KeyPanel } from '../components/KeyPanel';
import { ErrorLine, when } from '../components/Layout';
import { MessageItem } from '../components/MessageItem';
import { useEventCount, useLive } from '../live';
import { canSeal } from '../sealed/lib';
import { RetryableSends } from '../sealed/retryable';
import { outgoing, type Outgoing } from '../sealed/sealing';
import { useConversationKeys } from '../sealed/useConversationKeys';
import { useOpened } from '../sealed/useOpened';
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

/**
 * The conversation's messages, refetched when an event of this conversation arrives (a message, a
 * revision); sending, sealed to both sides' keys once the other side has one; correcting and
 * retracting one's own.
 */
export function ConversationPage({ conversationId, session }: { conversationId: string; session: Session }) {
  const [messages, setMessages] = useState<ConversationMessage[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [sentPlain, setSentPlain] = useState(false);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [sends] = useState(() => new RetryableSends<Outgoing>());
  const [revisions] = useState(() => new RetryableSends<Revision>());
  const { events } = useLive();
  const changes = useEventCount((e) => e.conversationId === conversationId);
  const ref = conversationsOf(events).find((c) => c.conversationId === conversationId);
  const counterpart = ref?.counterpart ?? 'your match';
  const me = session.userId;
  const keys = useConversationKeys(conversationId, me);
  const opened = useOpened(messages, conversationId, me, keys.myKeys);
  const theyHaveKeys = keys.keys?.some((k) => k.accountId !== me) ?? false;
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

  const post = async (content: string) => {
    const sent = await sends.send(
      'send',
      content,
      () => outgoing(content, conversationId, me, { plainAllowed: true }),
      async (body, clientMessageId) =>
        need(
          await api.POST('/api/v1/conversations/{conversationId}/messages', {
            params: { path },
            body: { ...body, clientMessageId },
          }),
          'send',
        ),
    );
    setSentPlain(sent.sealed === undefined);
  };
  const revise = (m: ConversationMessage, action: 'correct' | 'retract', text = '') =>
    revisions.send(
      `${action} ${m.id}`,
      text,
      async (): Promise<Revision> =>
        action === 'retract'
          ? { action }
          : { action, ...(await outgoing(text, conversationId, me, { plainAllowed: !m.sealed })) },
      async (body, clientMessageId) => {
        need(
          await api.POST('/api/v1/conversations/{conversationId}/messages/{messageId}/revise', {
            params: { path: { conversationId, messageId: m.id } },
            body: { ...body, clientMessageId },
          }),
          action,
        );
        await load();
      },
    );
  const open = async (attachmentId: string) => {
    const res = await api.GET('/api/v1/conversations/{conversationId}/attachments/{attachmentId}/url', {
      params: { path: { conversationId, attachmentId } },
    });
    if (res.data?.url) window.open(res.data.url, '_blank', 'noopener,noreferrer');
    else setError('That file was deleted.');
  };

  const note = !canSeal() ? (
    <>This page is not on a secure origin (https), so it cannot seal: your messages go unsealed.</>
  ) : keys.keys === null ? null : theyHaveKeys ? (
    <>
      <span aria-hidden="true">🔒 </span>Sealed: only your devices and {counterpart}'s can open your messages.
    </>
  ) : (
    <>{counterpart} has no key yet, so your messages go unsealed: the server can read them.</>
  );

  return (
    <>
      <h1 tabIndex={-1}>Conversation with {counterpart}</h1>
      <ErrorLine error={error} />
      <ErrorLine error={keys.error} />
      {keys.keys ? (
        <KeyPanel
          me={me}
          counterpart={counterpart}
          keys={keys.keys}
          mine={keys.mine}
          change={keys.change}
          accept={keys.accept}
        />
      ) : null}
      {messages === null ? (
        <p>Loading…</p>
      ) : (
        <ol class="chat" aria-live="polite" aria-label="Messages" tabIndex={0}>
          {messages.length === 0 ? <li class="muted">No messages yet. Say hello.</li> : null}
          {messages.map((m) => (
            <MessageItem
              key={m.id}
              m={m}
              opened={m.sealed ? opened.get(m.id) : { state: 'open', text: m.content }}
              own={m.senderUserId === me}
              from={ref?.counterpart ?? 'Them'}
              openFile={(id) => void open(id)}
              correct={(text) => revise(m, 'correct', text)}
              retract={() => revise(m, 'retract')}
              confirming={confirming}
              setConfirming={setConfirming}
            />
          ))}
        </ol>
      )}
      <Composer id="conv-text" label="Message" post={post} onSent={load} note={note} />
      {sentPlain ? (
        <p role="status" class="muted">
          Sent unsealed: {counterpart} had no key.
        </p>
      ) : null}
    </>
  );
}

/** A revision's body but its clientMessageId: a correction carries what a send would. */
type Revision = { action: 'retract' } | ({ action: 'correct' } & Outgoing);
