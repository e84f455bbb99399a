import { useEffect, useRef } from 'preact/hooks';

/**
 * Reads what a page shows, now and again whenever `deps` change (an event that concerns it arrived),
 * and applies only the newest read's answer: reads in flight at once may answer out of order, and an
 * older answer must not overwrite a newer one. `load` checks `latest()` after its awaits, before it
 * sets state. Returns the read, for a page that reads again after its own action.
 */
export function useLoad(
  load: (latest: () => boolean) => Promise<void>,
  deps: readonly unknown[],
): () => Promise<void> {
  const runs = useRef(0);
  const run = async () => {
    const n = ++runs.current;
    await load(() => runs.current === n);
  };
  useEffect(() => void run(), deps);
  return run;
}
