import type { AccountCommand } from '../domain/account.ts';
import { NotFoundError } from '../domain/errors.ts';
import { accountStream, registeredAccountId } from '../infra/ids.ts';
import { accountCommands, type AuthContext } from './context.ts';

/** Whether the command appended anything (each of these is idempotent). */
async function run(ctx: AuthContext, accountId: string, command: AccountCommand): Promise<boolean> {
  const { appended } = await accountCommands(ctx)(accountStream(accountId), command);
  return appended.length > 0;
}

/** An account id, or the email of a registered account (found in the credential view). */
export async function resolveAccountId(ctx: AuthContext, idOrEmail: string): Promise<string> {
  if (!idOrEmail.includes('@')) return idOrEmail.trim();
  const id = await registeredAccountId(ctx.orm.em.fork(), idOrEmail);
  if (id === null) throw new NotFoundError('ACCOUNT_NOT_FOUND', 'Account not found');
  return id;
}

/**
 * Operator ban (no more sockets, an `account_banned` notice first); idempotent. `banned` is false
 * when the account was banned already.
 */
export async function banAccount(
  ctx: AuthContext,
  idOrEmail: string,
  reason: string | null = null,
): Promise<{ accountId: string; banned: boolean }> {
  const accountId = await resolveAccountId(ctx, idOrEmail);
  return { accountId, banned: await run(ctx, accountId, { type: 'BanAccount', data: { reason } }) };
}

/** Records the outdated-connector notice unless this account already has one for (connector, latest). */
export async function noticeOutdatedConnector(
  ctx: AuthContext,
  input: { accountId: string; connector: string; installed: string; latest: string },
): Promise<{ notified: boolean }> {
  const { accountId, ...data } = input;
  return { notified: await run(ctx, accountId, { type: 'NoticeOutdatedConnector', data }) };
}

/**
 * Records the `runtime_job_waiting` notice of a runtime job handed to the owner (ADR 0032), unless
 * the account was told about that job already: one notice per job however often it is asked.
 */
export async function noticeRuntimeJobWaiting(
  ctx: AuthContext,
  input: { accountId: string } & Extract<AccountCommand, { type: 'NoticeRuntimeJobWaiting' }>['data'],
): Promise<{ notified: boolean }> {
  const { accountId, ...data } = input;
  return { notified: await run(ctx, accountId, { type: 'NoticeRuntimeJobWaiting', data }) };
}

/**
 * Disables a webhook endpoint that failed for the whole give-up period. The event's inline
 * projection sets `auth.webhooks.disabled_at` in the append's transaction; the projector turns it into
 * the account's `webhook_disabled` notice. `disabled` is false when it was disabled already.
 */
export async function disableWebhook(
  ctx: AuthContext,
  input: { accountId: string; webhookId: string; url: string; reason: string },
): Promise<{ disabled: boolean }> {
  const { accountId, ...data } = input;
  return { disabled: await run(ctx, accountId, { type: 'DisableWebhook', data }) };
}
