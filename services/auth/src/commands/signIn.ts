import { accountIdForEmail, accountStream, normalizeEmail, registeredAccountId } from '../infra/ids.ts';
import { accountCommands, type AuthContext } from './context.ts';

export interface AccountView {
  id: string;
  /** In the sign-in answer's `user`: a string, or absent — never null. */
  email?: string;
  sourcePlatform: string;
  createdAt: string;
}

/** Sign-in derives the id of a new account, under the deployment's ID_SECRET. */
export interface SignInContext extends AuthContext {
  idSecret: string;
}

export interface SignInInput {
  email: string;
  googleSub: string | null;
  /** Already normalized (unknown or missing → `other`); only used when this call creates the account. */
  platform: string;
  method: 'email' | 'google';
}

/**
 * Sign-in-or-create, for both Google and email-code sign-in. The account registered under the email
 * keeps its id (whichever way it was derived); a new one gets the keyed id. Two concurrent first
 * sign-ins of one email race on that one stream; the loser's append conflicts, is retried, and finds
 * the account registered.
 */
export async function signIn(ctx: SignInContext, input: SignInInput): Promise<AccountView> {
  const email = normalizeEmail(input.email);
  const accountId =
    (await registeredAccountId(ctx.orm.em.fork(), email)) ?? accountIdForEmail(ctx.idSecret, email);
  const data = {
    accountId,
    email,
    googleSub: input.googleSub,
    platform: input.platform,
    method: input.method,
  };
  const { state } = await accountCommands(ctx)(accountStream(accountId), { type: 'SignIn', data });
  if (state.status === 'unregistered') throw new Error('sign-in left the account unregistered');
  return {
    id: state.accountId,
    ...(state.email !== null ? { email: state.email } : {}),
    sourcePlatform: state.sourcePlatform,
    createdAt: state.createdAt,
  };
}
