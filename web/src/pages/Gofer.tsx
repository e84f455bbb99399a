import { useEffect, useRef, useState } from 'preact/hooks';
import { api, need, type ChatMessage, type Gofer, type PairingCard } from '../api/client';
import { ErrorLine, when } from '../components/Layout';
import { useEventCount, useLive } from '../live';
import { loadSession } from '../session';

/** The Gofer's page (A29 `/gofers/:id`): its role-chat, files and pairings, refreshed by its events. */
export function GoferPage({ goferId }: { goferId: string }) {
  const [gofer, setGofer] = useState<Gofer | null | undefined>(undefined);
  const [chat, setChat] = useState<ChatMessage[]>([]);
  const [pairings, setPairings] = useState<PairingCard[]>([]);
  const [error, setError] = useState<string | null>(null);
  const changes = useEventCount((e) => e.goferId === goferId);
  const { unresolved } = useLive();
  const question = unresolved.events.find((e) => e.type === 'gofer_question' && e.goferId === goferId);

  const load = async () => {
    try {
      const path = { goferId };
      const [list, messages, cards] = await Promise.all([
        api.GET('/api/v1/gofers'),
        api.GET('/api/v1/gofers/{goferId}/chat/messages', { params: { path } }),
        api.GET('/api/v1/gofers/{goferId}/pairings', { params: { path } }),
      ]);
      setGofer(need(list, 'GET /gofers').find((g) => g.goferId === goferId) ?? null);
      if (messages.response.ok) setChat(need(messages, 'chat'));
      if (cards.response.ok) setPairings(need(cards, 'pairings').items);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  useEffect(() => void load(), [goferId, changes]);

  if (gofer === undefined) return <h1 tabIndex={-1}>Loading…</h1>;
  if (gofer === null)
    return (
      <>
        <h1 tabIndex={-1}>Gofer not found</h1>
        <p>
          This Gofer does not exist or is not yours. <a href="/">Back to your Gofers</a>
        </p>
      </>
    );
  return (
    <>
      <h1 tabIndex={-1}>{gofer.name}</h1>
      <p class="muted">
        {gofer.description} ·{' '}
        {gofer.discoveryStatus === 'ready_for_pairing' ? 'Ready for pairing' : 'In discovery'}
      </p>
      <ErrorLine error={error} />
      {question ? (
        <p class="callout" role="note">
          Your Gofer is waiting for your answer.
        </p>
      ) : null}
      <RoleChat goferId={goferId} name={gofer.name} chat={chat} onSent={load} />
      <Files goferId={goferId} onSent={load} />
      <section aria-labelledby="pairings">
        <h2 id="pairings">Pairings</h2>
        {pairings.length === 0 ? <p>No pairings yet.</p> : <PairingCards cards={pairings} />}
      </section>
    </>
  );
}

function RoleChat({
  goferId,
  name,
  chat,
  onSent,
}: {
  goferId: string;
  name: string;
  chat: ChatMessage[];
  onSent: () => Promise<void>;
}) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const end = useRef<HTMLLIElement>(null);
  useEffect(() => end.current?.scrollIntoView({ block: 'nearest' }), [chat.length]);

  const send = async (ev: Event) => {
    ev.preventDefault();
    if (!text.trim()) return;
    setBusy(true);
    setError(null);
    try {
      need(
        await api.POST('/api/v1/gofers/{goferId}/chat/messages', {
          params: { path: { goferId } },
          body: { content: text },
        }),
        'send',
      );
      setText('');
      await onSent();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="chat">
      <h2 id="chat">Chat with {name}</h2>
      <ol class="chat" aria-live="polite" aria-label="Role-chat messages">
        {chat.map((m, i) => (
          <li key={m.id} class={`msg msg-${m.role}`} ref={i === chat.length - 1 ? end : undefined}>
            <span class="from">{m.role === 'user' ? 'You' : m.role === 'assistant' ? name : 'Platform'}</span>
            <span class="text">{m.content}</span>
            {m.pairing ? (
              <a href={`/threads/${encodeURIComponent(m.pairing.threadId)}`}>
                Open the pairing with {m.pairing.counterpart.name}
              </a>
            ) : null}
            {m.attachments?.map((a) => (
              <span key={a.id} class="file">
                {a.kind === 'photo' ? 'Photo' : 'Document'}: {a.name}
              </span>
            ))}
            <time dateTime={m.createdAt}>{when(m.createdAt)}</time>
          </li>
        ))}
      </ol>
      <form onSubmit={(ev) => void send(ev)} class="send">
        <label for="chat-text">Message to {name}</label>
        <textarea id="chat-text" rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
      <ErrorLine error={error} />
    </section>
  );
}

const PHOTO = /^image\/(jpeg|png|webp)$/;

/** §4.4 (16)/(17): a file goes up, then into the chat as a message carrying its id. */
function Files({ goferId, onSent }: { goferId: string; onSent: () => Promise<void> }) {
  const [error, setError] = useState<string | null>(null);
  const [last, setLast] = useState<{ name: string; url?: string } | null>(null);
  const upload = async (ev: Event) => {
    ev.preventDefault();
    const input = (ev.currentTarget as HTMLFormElement).elements.namedItem('file') as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    setError(null);
    try {
      const form = new FormData();
      form.append('file', file, file.name);
      const kind = PHOTO.test(file.type) ? 'photos' : 'attachments';
      const res = await fetch(`/api/v1/gofers/${encodeURIComponent(goferId)}/${kind}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${loadSession()?.token ?? ''}` },
        body: form,
      });
      const body = (await res.json()) as {
        error?: string;
        photo?: { id: string; name: string };
        attachment?: { id: string; name: string; url: string };
      };
      if (!res.ok) throw new Error(body.error ?? `upload: HTTP ${res.status}`);
      const id = body.photo?.id ?? body.attachment?.id ?? '';
      need(
        await api.POST('/api/v1/gofers/{goferId}/chat/messages', {
          params: { path: { goferId } },
          body: { attachmentIds: [id] },
        }),
        'send file',
      );
      setLast(
        body.attachment
          ? { name: body.attachment.name, url: body.attachment.url }
          : { name: body.photo?.name ?? file.name },
      );
      input.value = '';
      await onSent();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <section aria-labelledby="files">
      <h2 id="files">Documents and photos</h2>
      <form onSubmit={(ev) => void upload(ev)}>
        <label for="file">A document (PDF, Word, text, CSV) or photo (JPEG, PNG, WebP), up to 10 MB</label>
        <input id="file" name="file" type="file" />
        <button type="submit">Upload</button>
      </form>
      {last ? (
        <p role="status">
          Uploaded {last.name}
          {last.url ? (
            <>
              {' '}
              (
              <a href={last.url} target="_blank" rel="noopener noreferrer">
                open
              </a>
              )
            </>
          ) : null}
          .
        </p>
      ) : null}
      <ErrorLine error={error} />
    </section>
  );
}

export function PairingCards({ cards }: { cards: PairingCard[] }) {
  return (
    <ul class="cards">
      {cards.map((c) => (
        <li key={c.id} class="card">
          <h3>
            <a href={`/threads/${encodeURIComponent(c.threadId)}`}>
              {c.cardTitle ?? `Pairing with ${c.opponentRoleName}`}
            </a>
          </h3>
          <p>
            With <strong>{c.opponentRoleName}</strong>
            {c.opponentUserName ? ` (${c.opponentUserName})` : ''} · {c.pairingStatus} · {c.dynamicStatus}
          </p>
          {c.summaryPreview ? <p>{c.summaryPreview}</p> : <p class="muted">Summary not ready yet.</p>}
          <p class="muted">
            {c.photoCount} photo{c.photoCount === 1 ? '' : 's'} · updated {when(c.updatedAt)}
          </p>
        </li>
      ))}
    </ul>
  );
}
