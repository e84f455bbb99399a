import { useState } from 'preact/hooks';

/**
 * What the operator starts with a button — send, create, delete, revoke, confirm — run one at a time:
 * `busy` while it runs (its buttons disabled), the failure's text as `error` (the server's `error`,
 * through `need`), cleared when the next one starts. `run` resolves whether the work succeeded.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (work: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      await work();
      return true;
    } catch (err) {
      setError((err as Error).message);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
