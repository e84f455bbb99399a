import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useAction } from '../useAction';
import { ErrorLine } from './Layout';

/**
 * A message box and its Send button (a Gofer's role-chat, a conversation): `post` sends the text;
 * once it is accepted the box is cleared and `onSent` reloads what it went to. A refused message
 * stays in the box beside the server's reason. `note` says how the message will travel (sealed or
 * not), read out with the box.
 */
export function Composer({
  id,
  label,
  post,
  onSent,
  note,
}: {
  id: string;
  label: string;
  post: (content: string) => Promise<unknown>;
  onSent: () => Promise<void>;
  note?: ComponentChildren;
}) {
  const [text, setText] = useState('');
  const { busy, error, run } = useAction();
  const send = (ev: Event) => {
    ev.preventDefault();
    if (!text.trim()) return;
    void run(async () => {
      await post(text);
      setText('');
      await onSent();
    });
  };
  return (
    <>
      <form onSubmit={send} class="send">
        <label for={id}>{label}</label>
        {note ? (
          <p id={`${id}-note`} class="composer-note">
            {note}
          </p>
        ) : null}
        <textarea
          id={id}
          rows={3}
          value={text}
          aria-describedby={note ? `${id}-note` : undefined}
          onInput={(e) => setText(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
      <ErrorLine error={error} />
    </>
  );
}
