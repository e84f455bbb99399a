import type { ChildProcess } from 'node:child_process';
import { waitFor } from '@oan/testing';

/** Settles when the child has ended (exited, or never started). */
export function exitOf(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.once('error', resolve);
  });
}

/**
 * Waits (bounded) until a server the test spawned answers `ready`; fails at once, with `log()` for
 * context, when it cannot be run or exits first.
 */
export async function untilServing(
  child: ChildProcess,
  ready: () => Promise<boolean>,
  opts: { what: string; cannotRun: string; log: () => string; timeoutMs: number },
): Promise<void> {
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (err) => reject(new Error(`${opts.cannotRun}: ${err.message}`)));
    child.once('exit', (code) => reject(new Error(`${opts.what} exited with ${code}: ${opts.log()}`)));
  });
  failed.catch(() => undefined);
  await Promise.race([
    failed,
    waitFor(ready, { timeoutMs: opts.timeoutMs, intervalMs: 100, what: opts.what }),
  ]);
}
