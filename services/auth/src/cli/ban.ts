/**
 * Operator ban: `npm run ban -- <accountId|email> [reason…]`. Appends `AccountBanned` and sets
 * `banned_at` in one transaction; banning twice appends nothing. Prints the account id on stdout.
 * (The projector turns the event into the `account_banned` notice and the socket disconnects.)
 */
import { commonEnv, loadConfig, z } from '@oan/config';
import { openDatabase } from '@oan/db';
import { banAccount } from '../commands/accountAdmin.ts';
import { NotFoundError } from '../domain/errors.ts';
import { authMigrations, createAuthStore } from '../infra/store.ts';

const [target, ...reasonWords] = process.argv.slice(2);
if (!target) {
  console.error('usage: npm run ban -- <accountId|email> [reason…]');
  process.exit(2);
}

const env = loadConfig(z.object({ DATABASE_URL: commonEnv.shape.DATABASE_URL }));
const store = createAuthStore();
const orm = await openDatabase({ url: env.DATABASE_URL, schema: 'auth', migrations: authMigrations(store) });
try {
  const reason = reasonWords.length > 0 ? reasonWords.join(' ') : null;
  const { accountId, banned } = await banAccount({ orm, store, now: () => new Date() }, target, reason);
  console.log(accountId);
  console.error(banned ? 'account banned' : 'account was already banned; nothing recorded');
} catch (err) {
  if (!(err instanceof NotFoundError)) throw err;
  console.error(`no account ${target}`);
  process.exitCode = 1;
} finally {
  await orm.close(true);
}
