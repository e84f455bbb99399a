import { randomBytes, randomUUID } from 'node:crypto';
import { generateApiKey, hashApiKey } from '@oan/auth';
import { handleMultiStreamCommand } from '@oan/eventstore';
import { API_KEY_PERMISSIONS } from '@oan/protocol';
import { accountDecider, decideAccount } from '../domain/account.ts';
import { IllegalStateError } from '../domain/errors.ts';
import { decidePairingCode, PAIRING_CODE_TTL_MS, pairingCodeDecider } from '../domain/pairingCode.ts';
import { projectCredentials } from '../infra/credentialsProjection.ts';
import { accountStream, pairingCodeHash, pairingCodeStream } from '../infra/ids.ts';
import { pairingCodeCommands, toNewEvents, type AuthContext } from './context.ts';

/** A pairing code: 8 random bytes as hex; only its hash is recorded (the stream id included). */
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
      // Issued at the time its expiry is counted from.
      const command = { type: 'IssuePairingCode', data: { codeHash, accountId, expiresAt } } as const;
      await pairingCodeCommands(ctx)(pairingCodeStream(codeHash), command, { now });
      return { code, expiresAt };
    } catch (err) {
      // A 64-bit collision: draw another code rather than fail the caller.
      if (err instanceof IllegalStateError && err.code === 'PAIRING_CODE_TAKEN' && attempt < 3) continue;
      throw err;
    }
  }
}

/**
 * Redeeming a pairing code for an API key. `PairingCodeRedeemed` (on the code's stream) and
 * `ApiKeyIssued` (on the account's) are appended in ONE transaction, each at the version it was
 * decided on: of concurrent redeems of one code exactly one commits; the others conflict, run again,
 * and find the code used (a code redeems once).
 */
export async function redeemPairingCode(
  ctx: AuthContext,
  code: string,
): Promise<{ apiKey: string; userId: string }> {
  const codeHash = pairingCodeHash(code);
  const apiKey = generateApiKey();
  const apiKeyId = randomUUID();
  const { result } = await handleMultiStreamCommand(
    ctx.orm,
    ctx.store,
    async (load) => {
      const now = ctx.now().toISOString();
      const redeemed = decidePairingCode(
        { type: 'RedeemPairingCode', data: { codeHash, apiKeyId }, metadata: { now } },
        await load(pairingCodeStream(codeHash), pairingCodeDecider),
      );
      const accountId = redeemed[0]!.data.accountId;
      const issued = decideAccount(
        {
          type: 'IssueApiKey',
          data: {
            apiKeyId,
            keyHash: hashApiKey(apiKey),
            name: `connector (redeemed ${now})`, // the key is named after its redemption
            permissions: [...API_KEY_PERMISSIONS],
            pairingCodeHash: codeHash,
          },
          metadata: { now },
        },
        await load(accountStream(accountId), accountDecider),
      );
      return {
        appends: [
          { streamId: pairingCodeStream(codeHash), events: toNewEvents(accountId, now, redeemed) },
          { streamId: accountStream(accountId), events: toNewEvents(accountId, now, issued) },
        ],
        result: { apiKey, userId: accountId },
      };
    },
    { inline: projectCredentials },
  );
  return result;
}
