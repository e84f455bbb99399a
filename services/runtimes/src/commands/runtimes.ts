import { transaction } from '@oan/db';
import { IllegalStateError, NotFoundError, RejectedError } from '../domain/errors.ts';
import { samePolicy, type Policy } from '../domain/policy.ts';
import { ingest, reevaluate } from '../infra/jobStore.ts';
import {
  createRuntime,
  deleteRuntime,
  ownRuntime,
  updatePolicy,
  type RuntimeRow,
} from '../infra/runtimeStore.ts';
import type { RuntimesContext } from './context.ts';

/** At most this many runtimes per account. */
export const MAX_RUNTIMES_PER_ACCOUNT = 8;

export const runtimeNotFound = () => new NotFoundError('RUNTIME_NOT_FOUND', 'Runtime not found');

/**
 * Registers a named runtime. The same name with the same policy answers the existing one
 * (`created: false`); with another policy it is refused, so a worker started with stale settings
 * never silently changes what its siblings receive.
 */
export async function registerRuntime(
  ctx: RuntimesContext,
  accountId: string,
  name: string,
  policy: Policy,
  endpoint?: { url: string; secret: string },
): Promise<{ created: boolean; row: RuntimeRow }> {
  const result = await transaction(ctx.orm, (em) =>
    createRuntime(
      em,
      { id: ctx.ids(), accountId, name, policy, now: ctx.now(), endpoint },
      MAX_RUNTIMES_PER_ACCOUNT,
    ),
  );
  switch (result.kind) {
    case 'limit':
      throw new RejectedError(
        'RUNTIME_LIMIT_REACHED',
        `At most ${MAX_RUNTIMES_PER_ACCOUNT} runtimes per account; delete one first`,
      );
    case 'existing':
      if (!samePolicy(result.row.policy, policy) || result.row.endpoint !== (endpoint?.url ?? null)) {
        throw new IllegalStateError('RUNTIME_EXISTS', 'A runtime of this name exists with other settings');
      }
      return { created: false, row: result.row };
    case 'created':
      return { created: true, row: result.row };
  }
}

export async function removeRuntime(ctx: RuntimesContext, accountId: string, id: string): Promise<void> {
  if (!(await transaction(ctx.orm, (em) => deleteRuntime(em, accountId, id)))) throw runtimeNotFound();
}

/**
 * Compare-and-set of the policy: `version` must be the runtime's current one. Jobs not claimed yet
 * are re-evaluated against the new policy in the same transaction.
 */
export async function configureRuntime(
  ctx: RuntimesContext,
  accountId: string,
  id: string,
  version: number,
  policy: Policy,
): Promise<RuntimeRow> {
  const row = await transaction(ctx.orm, async (em) => {
    const current = await ownRuntime(em, accountId, id, true);
    if (!current) throw runtimeNotFound();
    if (current.version !== version) {
      throw new IllegalStateError(
        'VERSION_CONFLICT',
        `The runtime is at version ${current.version}; read it again and retry`,
      );
    }
    // what was stored before the change is judged by the policy it was stored under, then re-evaluated
    await ingest(em, current, ctx.now());
    const updated = await updatePolicy(em, id, policy);
    await reevaluate(em, id, policy, ctx.now());
    return updated;
  });
  return row;
}
