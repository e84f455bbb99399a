import { useEffect, useRef, useState } from 'preact/hooks';
import { api, need, type ChatMessage, type Gofer, type PairingCard } from '../api/client';
import { Composer } from '../components/Composer';
import { ErrorLine, when } from '../components/Layout';
import { useEventCount, useLive } from '../live';
import { useLoad } from '../useLoad';
import { loadSession } from '../session';
import { useSignedUrls } from '../signedUrls';
import { useAction } from '../useAction';

/** The Gofer's page (`/gofers/:id`, the webUrl of its events): its role-chat, files and pairings, refreshed by its events. */
export function GoferPage({ goferId }: { goferId: string }) {
  const [gofer, setGofer] = useState<Gofer | null | undefined>(undefined);
  const [chat, setChat] = useState<ChatMessage[]>([]);
  const [pairings, setPairings] = useState<PairingCard[]>([]);
  const [error, setError] = useState<string | null>(null);
  const changes = useEventCount((e) => e.goferId === goferId);
  const { unresolved } = useLive();
  const question = unresolved.events.find((e) => e.type === 'gofer_question' && e.goferId === goferId);

  const load = useLoad(
    async (latest) => {
      try {
        const path = { goferId };
        const [list, messages, cards] = await Promise.all([
          api.GET('/api/v1/gofers'),
          api.GET('/api/v1/gofers/{goferId}/chat/messages', { params: { path } }),
          api.GET('/api/v1/gofers/{goferId}/pairings', { params: { path } }),
        ]);
        if (!latest()) return;
        setGofer(need(list, 'GET /gofers').find((g) => g.goferId === goferId) ?? null);
        if (messages.response.ok) setChat(need(messages, 'chat'));
        if (cards.response.ok) setPairings(need(cards, 'pairings').items);
      } catch (err) {
        if (latest()) setError((err as Error).message);
      }
    },
    [goferId, changes],
  );

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
  const end = useRef<HTMLLIElement>(null);
  useEffect(() => end.current?.scrollIntoView({ block: 'nearest' }), [chat.length]);
  const post = async (content: string) =>
    need(
      await api.POST('/api/v1/gofers/{goferId}/chat/messages', {
        params: { path: { goferId } },
        body: { content },
      }),
      'send',
    );
  return (
    <section aria-labelledby="chat">
      <h2 id="chat">Chat with {name}</h2>
      {/* It scrolls: focusable, so a keyboard can scroll it too. */}
      <ol class="chat" aria-live="polite" aria-label="Role-chat messages" tabIndex={0}>
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
      <Composer id="chat-text" label={`Message to ${name}`} post={post} onSent={onSent} />
    </section>
  );
}

const PHOTO = /^image\/(jpeg|png|webp)$/;

/**
 * A file goes up (attachments or photos), then into the chat as a message carrying its id. A document's
 * answer holds its signed URL; a photo's holds none, so the page shows the file it sent (a blob: URL).
 */
function Files({ goferId, onSent }: { goferId: string; onSent: () => Promise<void> }) {
  const { busy, error, run } = useAction();
  const [last, setLast] = useState<{ name: string; url?: string; preview?: string } | null>(null);
  useEffect(
    () => () => {
      if (last?.preview) URL.revokeObjectURL(last.preview);
    },
    [last],
  );
  const upload = (ev: Event) => {
    ev.preventDefault();
    const input = (ev.currentTarget as HTMLFormElement).elements.namedItem('file') as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    void run(async () => {
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
          : { name: body.photo?.name ?? file.name, preview: URL.createObjectURL(file) },
      );
      input.value = '';
      await onSent();
    });
  };
  return (
    <section aria-labelledby="files">
      <h2 id="files">Documents and photos</h2>
      <form onSubmit={upload}>
        <label for="file">A document (PDF, Word, text, CSV) or photo (JPEG, PNG, WebP), up to 10 MB</label>
        <input id="file" name="file" type="file" />
        <button type="submit" disabled={busy}>
          Upload
        </button>
      </form>
      {last ? (
        <div role="status">
          <p>
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
          {last.preview ? <img class="preview" src={last.preview} alt={`Your photo ${last.name}`} /> : null}
        </div>
      ) : null}
      <ErrorLine error={error} />
    </section>
  );
}

/** The Gofer's pairings, each with its cover photo (the counterpart's first), counterpart and status. */
export function PairingCards({ cards }: { cards: PairingCard[] }) {
  return (
    <ul class="cards">
      {cards.map((c) => (
        <li key={c.id} class="card">
          <Cover card={c} />
          <h3>
            <a href={`/threads/${encodeURIComponent(c.threadId)}`}>
              {c.cardTitle ?? `Pairing with ${c.opponentRoleName}`}
            </a>
          </h3>
          <p>
            With <strong>{c.opponentRoleName}</strong>
            {c.opponentUserName ? ` (${c.opponentUserName})` : ''} · {c.pairingStatus.replace(/_/g, ' ')}
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

/** The card's `coverPhoto` is one of the counterpart's files: shown through its signed URL. */
function Cover({ card }: { card: PairingCard }) {
  const id = card.coverPhoto?.attachmentId;
  const ids = typeof id === 'string' ? [id] : [];
  const url = useSignedUrls(card.threadId, ids)[ids[0] ?? ''];
  return url ? <img class="cover" src={url} alt={`Cover photo of ${card.opponentRoleName}`} /> : null;
}
