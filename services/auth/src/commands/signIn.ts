import { handleCommand } from '@oan/eventstore';
import { accountDecider, decideAccount } from '../domain/account.ts';
import type { AccountState } from '../domain/accountState.ts';
import { projectCredentials } from '../infra/credentialsProjection.ts';
import { accountIdForEmail, accountStream, normalizeEmail } from '../infra/ids.ts';
import type { AuthContext } from './context.ts';
import { toNewEvents } from './context.ts';

export interface AccountView {
  id: string;
  /** §4.1: a string, or absent — never null. */
  email?: string;
  sourcePlatform: string;
  createdAt: string;
}

export interface SignInInput {
  email: string;
  googleSub: string | null;
  /** Already normalized (§2.6); only used when this call creates the account. */
  platform: string;
  method: 'email' | 'google';
}

/**
 * Sign-in-or-create (§4.1 (1), (3)). Two concurrent first sign-ins of one email race on one stream;
 * the loser's append conflicts, is retried, and finds the account registered.
 */
export async function signIn(ctx: AuthContext, input: SignInInput): Promise<AccountView> {
  const email = normalizeEmail(input.email);
  const accountId = accountIdForEmail(email);
  const { state } = await handleCommand(
    ctx.orm,
    ctx.store,
    accountStream(accountId),
    accountDecider,
    (s: AccountState) => {
      const now = ctx.now().toISOString();
      const data = {
        accountId,
        email,
        googleSub: input.googleSub,
        platform: input.platform,
        method: input.method,
      };
      return toNewEvents(accountId, now, decideAccount({ type: 'SignIn', data, metadata: { now } }, s));
    },
    { inline: projectCredentials },
  );
  if (state.status === 'unregistered') throw new Error('sign-in left the account unregistered');
  return {
    id: state.accountId,
    ...(state.email !== null ? { email: state.email } : {}),
    sourcePlatform: state.sourcePlatform,
    createdAt: state.createdAt,
  };
}
