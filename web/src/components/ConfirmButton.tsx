/**
 * A destructive action in a table row, asked twice: the first button names the action and the row
 * (for screen readers), the second says exactly what happens, beside a way out. One row of a table
 * asks at a time: the table holds which (`confirming`).
 */
export function ConfirmButton({
  id,
  name,
  action,
  confirmText,
  confirming,
  setConfirming,
  onConfirm,
}: {
  id: string;
  name: string;
  action: string;
  confirmText: string;
  confirming: string | null;
  setConfirming: (id: string | null) => void;
  onConfirm: () => void;
}) {
  if (confirming !== id) {
    return (
      <button type="button" onClick={() => setConfirming(id)} aria-label={`${action} ${name}`}>
        {action}
      </button>
    );
  }
  return (
    <>
      <button type="button" class="danger" onClick={onConfirm}>
        {confirmText}
      </button>{' '}
      <button type="button" onClick={() => setConfirming(null)}>
        Keep
      </button>
    </>
  );
}
