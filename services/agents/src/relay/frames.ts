import type { RawData } from 'ws';

/** A frame's JSON object, or undefined for anything else (bad JSON, arrays, scalars). */
export function parseFrame(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs a socket's handlers one after another (frames of one socket stay in order while some wait
 * on Redis); a failed handler is reported and the next one still runs.
 */
export function serially(onError: (err: unknown) => void): (task: () => unknown) => void {
  let tail: Promise<unknown> = Promise.resolve();
  return (task) => {
    tail = tail.then(task).catch(onError);
  };
}

/** A frame's text (the relay reads frames as UTF-8 JSON, binary or not). */
export function frameText(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data).toString('utf8');
}
