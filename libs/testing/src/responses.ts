import { expect } from 'vitest';

/** What the helpers read of an `app.inject` (light-my-request) answer. */
export interface InjectedResponse {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** Every non-empty body is JSON; 204 is empty (returns undefined). Returns the parsed body. */
export function body<T = unknown>(res: InjectedResponse): T {
  if (res.statusCode === 204) {
    expect(res.body).toBe('');
    return undefined as T;
  }
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return JSON.parse(res.body) as T;
}

/**
 * Asserts an error answer: status and the exact `{error, code}` body shape. `expected` is the code,
 * or the code and the error text (exact string or pattern). Returns the body.
 */
export function expectError(
  res: InjectedResponse,
  status: number,
  expected: string | { error?: string | RegExp; code: string },
): { error: string; code: string } {
  const { code, error } = typeof expected === 'string' ? { code: expected, error: undefined } : expected;
  expect(res.statusCode, res.body).toBe(status);
  const b = body<Record<string, unknown>>(res);
  expect(Object.keys(b).sort()).toEqual(['code', 'error']);
  expect(b.code).toBe(code);
  expect(typeof b.error).toBe('string');
  if (typeof error === 'string') expect(b.error).toBe(error);
  else if (error) expect(b.error).toMatch(error);
  return b as { error: string; code: string };
}
