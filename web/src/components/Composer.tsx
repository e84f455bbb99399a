import { useState } from 'preact/hooks';
import { useAction } from '../useAction';
import { ErrorLine } from './Layout';

/**
 * A message box and its Send button (a Gofer's role-chat, a conversation): `post` sends the text;
 * once it is accepted the box is cleared and `onSent` reloads what it went to. A refused message
 * stays in the box beside the server's reason.
 */
export function Composer({
  id,
  label,
  post,
  onSent,
}: {
  id: string;
  label: string;
  post: (content: string) => Promise<unknown>;
  onSent: () => Promise<void>;
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
        <textarea id={id} rows={3} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
      <ErrorLine error={error} />
    </>
  );
}
