/** Percentiles over latency samples in milliseconds. */
export function percentiles(samples: number[]): {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  n: number;
} {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: s[s.length - 1] ?? NaN, n: s.length };
}

export const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

/** The middle of `xs` (the upper one of an even count), for a few repeated runs of one figure. */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Calls `fn(i)` `count` times at `ratePerSec`, on a fixed schedule (no coordinated omission). */
export async function paced(
  count: number,
  ratePerSec: number,
  fn: (i: number) => Promise<void> | void,
): Promise<void> {
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / ratePerSec;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(Promise.resolve(fn(i)));
  }
  await Promise.all(pending);
}
