import type { OanEventEnvelope } from '@oan/protocol';
import { TestConnector } from '@oan/testing';

/** Longest any single request may take during a fault before it counts as a hang. */
export const REQUEST_BOUND_MS = 15_000;

/** One request's outcome: a status and its body, or the connection error that stood for it. */
export interface Outcome<T = unknown> {
  status: number | 'connection-error' | 'timeout';
  body: T;
  text: string;
  ms: number;
}

/** A bounded request through the edge, as an SDK sends it; never throws. */
export async function call<T = unknown>(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<Outcome<T>> {
  const t0 = Date.now();
  try {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_BOUND_MS),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, text, body: parsed as T, ms: Date.now() - t0 };
  } catch (err) {
    const e = err as Error;
    const timeout = e.name === 'TimeoutError' || e.name === 'AbortError';
    return {
      status: timeout ? 'timeout' : 'connection-error',
      text: String(e.message),
      body: undefined as T,
      ms: Date.now() - t0,
    };
  }
}

/**
 * The SDK-like connector of libs/testing (its backfill retries through a fault), whose requests are
 * bounded and never throw: during a fault every answer, including a refused connection or a hang,
 * is an outcome the load records.
 */
export class FaultConnector extends TestConnector {
  constructor(baseUrl: string, token: string, cursor: bigint) {
    super({ baseUrl, token, cursor: String(cursor) });
  }

  request<T = unknown>(method: string, path: string, body?: unknown): Promise<Outcome<T>> {
    return call<T>(this.opts.baseUrl, this.opts.token, method, path, body);
  }
}

/** Every envelope of the account after `since`, page by page (retrying a failed page, bounded). */
export async function allEvents(c: FaultConnector, since = 0n): Promise<OanEventEnvelope[]> {
  const all: OanEventEnvelope[] = [];
  for (let cursor = since, failures = 0; ;) {
    const page = await c.request<OanEventEnvelope[]>('GET', `/events?since=${cursor}&limit=200`);
    if (page.status !== 200) {
      if (++failures > 50) throw new Error(`GET /events: ${page.status} ${page.text}`);
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    all.push(...page.body);
    if (page.body.length < 200) return all;
    cursor = BigInt(page.body.at(-1)!.seq);
  }
}
