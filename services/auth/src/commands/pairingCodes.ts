import { randomBytes, randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '@oan/auth';
import { transaction } from '@oan/db';
import { ConcurrencyError, handleCommand } from '@oan/eventstore';
import { API_KEY_PERMISSIONS } from '@oan/protocol';
import { accountDecider, decideAccount } from '../domain/account';
import { IllegalStateError } from '../domain/errors';
import {
  decidePairingCode,
  PAIRING_CODE_TTL_MS,
  pairingCodeDecider,
  type PairingCodeState,
} from '../domain/pairingCode';
import { projectCredentials } from '../infra/credentialsProjection';
import { accountStream, pairingCodeHash, pairingCodeStream } from '../infra/ids';
import { fold, toNewEvents, type AuthContext } from './context';

/** §2.4: 8 random bytes as hex; only its hash is recorded (the stream id included). */
export async function issuePairingCode(
  ctx: AuthContext,
  accountId: string,
): Promise<{ code: string; expiresAt: string }> {
  for (let attempt = 0; ; attempt++) {
    const code = randomBytes(8).toString('hex');
    const codeHash = pairingCodeHash(code);
    const now = ctx.now();
    const expiresAt = new Date(now.getTime() + PAIRING_CODE_TTL_MS).toISOString();
    try {
      await handleCommand(
        ctx.orm,
        ctx.store,
        pairingCodeStream(codeHash),
        pairingCodeDecider,
        (s: PairingCodeState) =>
          toNewEvents(
            accountId,
            now.toISOString(),
            decidePairingCode(
              {
                type: 'IssuePairingCode',
                data: { codeHash, accountId, expiresAt },
                metadata: { now: now.toISOString() },
              },
              s,
            ),
          ),
      );
      return { code, expiresAt };
    } catch (err) {
      // A 64-bit collision: draw another code rather than fail the caller.
      if (err instanceof IllegalStateError && err.code === 'PAIRING_CODE_TAKEN' && attempt < 3) continue;
      throw err;
    }
  }
}

const REDEEM_RETRIES = 5;

/**
 * §4.1 (5). `PairingCodeRedeemed` (on the code's stream, expected version 1) and `ApiKeyIssued` (on
 * the account's) are appended in ONE transaction: of concurrent redeems of one code exactly one
 * commits; the others conflict, re-read the stream, and find the code used (invariant 5).
 */
export async function redeemPairingCode(
  ctx: AuthContext,
  code: string,
): Promise<{ apiKey: string; userId: string }> {
  const codeHash = pairingCodeHash(code);
  const apiKey = generateApiKey();
  const apiKeyId = randomUUID();
  for (let attempt = 0; ; attempt++) {
    try {
      const redeemedKey = await transaction(ctx.orm, async (em) => {
        const now = ctx.now().toISOString();
        const codeHistory = await ctx.store.readStream(em, pairingCodeStream(codeHash));
        const codeState = fold(pairingCodeDecider, codeHistory);
        const redeemed = decidePairingCode(
          { type: 'RedeemPairingCode', data: { codeHash, apiKeyId }, metadata: { now } },
          codeState,
        );
        const accountId = redeemed[0]!.data.accountId;

        const accountHistory = await ctx.store.readStream(em, accountStream(accountId));
        const account = fold(accountDecider, accountHistory);
        const issued = decideAccount(
          {
            type: 'IssueApiKey',
            data: {
              apiKeyId,
              keyHash: hashApiKey(apiKey),
              name: `connector (redeemed ${now})`, // A30
              permissions: [...API_KEY_PERMISSIONS],
              pairingCodeHash: codeHash,
            },
            metadata: { now },
          },
          account,
        );
        // The code stream is at version 1 here (issued, not redeemed): that is the expected version.
        const appended = await ctx.store.append(em, [
          {
            streamId: pairingCodeStream(codeHash),
            expectedVersion: codeHistory.length,
            events: toNewEvents(accountId, now, redeemed),
          },
          {
            streamId: accountStream(accountId),
            expectedVersion: accountHistory.length,
            events: toNewEvents(accountId, now, issued),
          },
        ]);
        await projectCredentials(em, appended);
        return { apiKey, userId: accountId };
      });
      ctx.store.committed(ctx.orm);
      return redeemedKey;
    } catch (err) {
      if (err instanceof ConcurrencyError && attempt < REDEEM_RETRIES) continue;
      throw err;
    }
  }
}
