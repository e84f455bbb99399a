import { ForbiddenError } from './errors.ts';
import type { ActiveGofer, GoferState } from './goferState.ts';

/**
 * Probe-safe: unknown, deleted and foreign Gofers are one refusal (byte-identical 403) on every
 * `/gofers/:goferId/*` route except DELETE.
 */
export function assertOwnedActive(state: GoferState, accountId: string): asserts state is ActiveGofer {
  if (state.status !== 'active' || state.accountId !== accountId) {
    throw new ForbiddenError('GOFER_FORBIDDEN', 'Forbidden');
  }
}
