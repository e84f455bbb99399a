import { randomBytes } from 'node:crypto';
import { transaction } from '@oan/db';
import { newSigningSecret, refuseUrl, type Attempt } from '@oan/webhooks';
import type { RuntimesContext } from '../commands/context.ts';
import { runtimeNotFound } from '../commands/runtimes.ts';
import { IllegalStateError, RejectedError } from '../domain/errors.ts';
import { echoes, verified } from '../domain/health.ts';
import { ownRuntime, type RuntimeRow } from '../infra/runtimeStore.ts';
import type { Endpoints } from './endpoints.ts';
import { recordHealth } from './store.ts';

/** Why a URL may not be a runtime's endpoint (the webhook rules), or null. */
export const refuseEndpoint = (e: Endpoints, url: string) => refuseUrl(url, e.settings.policy);

/** A new endpoint's URL and the secret it is signed with (answered once, in the create answer). */
export const newEndpoint = (url: string) => ({ url, secret: newSigningSecret() });

/** What the owner reads of a failed request: the status, or what went wrong, never our resolver's answer. */
export const describeAttempt = (a: Attempt): string =>
  a.error ?? (a.statusCode === null ? 'failed' : `HTTP ${a.statusCode}`);

export type Verification = { ok: true; row: RuntimeRow } | { ok: false; reason: string; row: RuntimeRow };

/**
 * Sends the endpoint a signed challenge (docs/runtimes.md) and records the result: echoed, the
 * runtime is `active` with its failures reset (this is how a `disabled` one comes back); otherwise it
 * is `unverified` and nothing is pushed.
 */
export async function verifyEndpoint(
  e: Endpoints,
  ctx: RuntimesContext,
  runtime: RuntimeRow,
): Promise<Verification> {
  const challenge = randomBytes(24).toString('base64url');
  const body = JSON.stringify({ type: 'runtime.verification', runtimeId: runtime.id, challenge });
  const at = ctx.now();
  const attempt = await e.sender.send(
    { url: runtime.endpoint!, secret: runtime.secret! },
    `verify_${ctx.ids()}`,
    body,
    at,
    { answerLimitBytes: 4096 },
  );
  const ok = attempt.delivered && echoes(attempt.answer, challenge);
  const reason = attempt.delivered ? 'the answer does not echo the challenge' : describeAttempt(attempt);
  const row = await transaction(ctx.orm, (em) =>
    recordHealth(em, runtime.id, () => verified(ok), {
      at,
      seen: attempt.delivered,
      verified: ok,
      ...(ok
        ? {}
        : {
            failure: { kind: 'verification', job_id: null, status_code: attempt.statusCode, error: reason },
          }),
    }),
  );
  if (!row) throw runtimeNotFound(); // deleted meanwhile
  return ok ? { ok, row } : { ok, reason, row };
}

/** `POST /runtimes/{id}/verify`: the account's runtime with an endpoint, verified now or refused. */
export async function verifyRuntime(
  e: Endpoints,
  ctx: RuntimesContext,
  accountId: string,
  runtimeId: string,
): Promise<RuntimeRow> {
  const runtime = await ownRuntime(ctx.orm.em.fork(), accountId, runtimeId);
  if (!runtime) throw runtimeNotFound();
  if (runtime.endpoint === null) {
    throw new IllegalStateError('RUNTIME_WITHOUT_ENDPOINT', 'This runtime has no endpoint to verify');
  }
  const result = await verifyEndpoint(e, ctx, runtime);
  if (!result.ok) {
    throw new RejectedError(
      'VERIFICATION_FAILED',
      `The endpoint did not answer the challenge: ${result.reason}`,
    );
  }
  // jobs that waited for the verification may be pushed at once.
  e.wakeDispatch();
  return result.row;
}
