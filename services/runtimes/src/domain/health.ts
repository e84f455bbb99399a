/**
 * The health of a runtime with an endpoint (ADR 0033). Pure: the store locks the runtime row and
 * writes what these return.
 *
 * `unverified`: no challenge answered yet, or the last one failed; nothing is pushed. `active`:
 * verified and answering. `unhealthy`: `unhealthyAfter` pushes in a row failed; still pushed to,
 * one job at a time. `disabled`: `disableAfter` in a row failed; nothing is pushed until the owner
 * verifies it again.
 */
export const ENDPOINT_STATES = ['unverified', 'active', 'unhealthy', 'disabled'] as const;
export type EndpointState = (typeof ENDPOINT_STATES)[number];

export interface Health {
  state: EndpointState;
  consecutiveFailures: number;
}

export interface HealthThresholds {
  unhealthyAfter: number;
  disableAfter: number;
}

/** Whether jobs are pushed to the endpoint in this state. */
export const dispatchable = (state: EndpointState): boolean => state === 'active' || state === 'unhealthy';

/** A challenge answered (or not): verified resets the count, whatever the state was before. */
export function verified(ok: boolean): Health {
  return { state: ok ? 'active' : 'unverified', consecutiveFailures: 0 };
}

/** The endpoint answered a push with a finish body: it is alive. */
export function pushAnswered(h: Health): Health {
  return dispatchable(h.state) ? { state: 'active', consecutiveFailures: 0 } : h;
}

/** A push failed (no answer in time, not a 2xx, not a finish body). */
export function pushFailed(h: Health, t: HealthThresholds): Health {
  if (!dispatchable(h.state)) return h;
  const consecutiveFailures = h.consecutiveFailures + 1;
  const state =
    consecutiveFailures >= t.disableAfter
      ? 'disabled'
      : consecutiveFailures >= t.unhealthyAfter
        ? 'unhealthy'
        : h.state;
  return { state, consecutiveFailures };
}

/** What the endpoint must answer to a challenge: a JSON object whose `challenge` is the one sent. */
export function echoes(answer: string | undefined, challenge: string): boolean {
  if (answer === undefined) return false;
  try {
    const parsed = JSON.parse(answer) as unknown;
    return (
      typeof parsed === 'object' &&
      parsed !== null &&
      (parsed as { challenge?: unknown }).challenge === challenge
    );
  } catch {
    return false;
  }
}
