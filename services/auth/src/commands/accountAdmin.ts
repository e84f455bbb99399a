import { handleCommand } from '@oan/eventstore';
import { accountDecider, decideAccount, type AccountCommand } from '../domain/account.ts';
import type { AccountState } from '../domain/accountState.ts';
import { projectCredentials } from '../infra/credentialsProjection.ts';
import { accountIdForEmail, accountStream } from '../infra/ids.ts';
import { toNewEvents, type AuthContext } from './context.ts';

async function run(ctx: AuthContext, accountId: string, command: AccountCommand): Promise<boolean> {
  const { appended } = await handleCommand(
    ctx.orm,
    ctx.store,
    accountStream(accountId),
    accountDecider,
    (s: AccountState) => {
      const now = ctx.now().toISOString();
      return toNewEvents(accountId, now, decideAccount({ ...command, metadata: { now } }, s));
    },
    { inline: projectCredentials },
  );
  return appended.length > 0;
}

/** An account id, or an email (ids are derived from emails, so no lookup is needed). */
export const resolveAccountId = (idOrEmail: string) =>
  idOrEmail.includes('@') ? accountIdForEmail(idOrEmail) : idOrEmail.trim();

/** Operator ban (§2.7); idempotent. `banned` is false when the account was banned already. */
export async function banAccount(
  ctx: AuthContext,
  idOrEmail: string,
  reason: string | null = null,
): Promise<{ accountId: string; banned: boolean }> {
  const accountId = resolveAccountId(idOrEmail);
  return { accountId, banned: await run(ctx, accountId, { type: 'BanAccount', data: { reason } }) };
}

/** A20: records the notice unless this account already has one for (connector, latest). */
export async function noticeOutdatedConnector(
  ctx: AuthContext,
  input: { accountId: string; connector: string; installed: string; latest: string },
): Promise<{ notified: boolean }> {
  const { accountId, ...data } = input;
  return { notified: await run(ctx, accountId, { type: 'NoticeOutdatedConnector', data }) };
}

/**
 * Issue 15: disables a webhook endpoint that failed for the whole give-up period. The event's inline
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
