import { useState } from 'preact/hooks';
import type { ConversationMessage } from '../api/client';
import type { Opened } from '../sealed/sealing';
import { useAction } from '../useAction';
import { ConfirmButton } from './ConfirmButton';
import { ErrorLine, when } from './Layout';

/** How long after sending its sender may still correct or retract a message. */
const REVISION_WINDOW_MS = 24 * 60 * 60 * 1000;

const CLOSED = {
  'no-key': 'Could not open this sealed message: it was not sealed to a key of this browser.',
  failed: 'Could not open this sealed message: it did not open with the key of this browser.',
} as const;

/**
 * One message of a conversation: who sent it, its text (a sealed one opened here, or why it stays
 * closed), "edited" once corrected, its files, and on one's own recent messages "Correct" and
 * "Retract".
 */
export function MessageItem({
  m,
  opened,
  own,
  from,
  openFile,
  correct,
  retract,
  confirming,
  setConfirming,
}: {
  m: ConversationMessage;
  opened: Opened | undefined;
  own: boolean;
  from: string;
  openFile: (attachmentId: string) => void;
  correct: (text: string) => Promise<unknown>;
  retract: () => Promise<unknown>;
  confirming: string | null;
  setConfirming: (id: string | null) => void;
}) {
  const [editing, setEditing] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const revisable = own && Date.now() - Date.parse(m.createdAt) < REVISION_WINDOW_MS;
  const text = opened?.state === 'open' ? opened.text : null;
  const editId = `correct-${m.id}`;
  const save = (ev: Event) => {
    ev.preventDefault();
    if (editing === null || !editing.trim()) return;
    void run(async () => {
      await correct(editing);
      setEditing(null);
    });
  };
  return (
    <li class={`msg ${own ? 'msg-user' : 'msg-assistant'}`}>
      <span class="from">
        {own ? 'You' : from}
        {m.sealed ? <span class="sealed-mark"> · sealed</span> : null}
        {m.revision?.state === 'corrected' ? <span class="muted"> · edited</span> : null}
      </span>
      {opened === undefined ? (
        <span class="text muted">Opening…</span>
      ) : opened.state === 'open' ? (
        <span class="text">{opened.text}</span>
      ) : (
        <span class="text unopened">{CLOSED[opened.why]}</span>
      )}
      {m.attachments.map((a) => (
        <button type="button" class="link file" key={a.attachmentId} onClick={() => openFile(a.attachmentId)}>
          {a.kind === 'photo' ? 'Photo' : 'Document'}: {a.name}
        </button>
      ))}
      <time dateTime={m.createdAt}>{when(m.createdAt)}</time>
      {editing !== null ? (
        <form onSubmit={save} class="send">
          <label for={editId}>Correction</label>
          <textarea id={editId} rows={2} value={editing} onInput={(e) => setEditing(e.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            Save correction
          </button>
          <button type="button" onClick={() => setEditing(null)}>
            Cancel
          </button>
        </form>
      ) : revisable ? (
        <span class="actions">
          {text !== null ? (
            <button
              type="button"
              aria-label={`Correct your message of ${when(m.createdAt)}`}
              onClick={() => setEditing(text)}
            >
              Correct
            </button>
          ) : null}{' '}
          <ConfirmButton
            id={m.id}
            name={`your message of ${when(m.createdAt)}`}
            action="Retract"
            confirmText="Retract it for both of you"
            confirming={confirming}
            setConfirming={setConfirming}
            onConfirm={() => {
              setConfirming(null);
              void run(retract);
            }}
          />
        </span>
      ) : null}
      <ErrorLine error={error} />
    </li>
  );
}
