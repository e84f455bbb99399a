import { IllegalStateError } from './errors.ts';
import type { PairingCodeEvent, Timed } from '@oan/domain';

/** Stream `pairing-code-<sha256(code)>`: the code itself is never stored (§2.4, invariant 6). */
export type PairingCodeState =
  | { status: 'unissued' }
  | { status: 'issued'; accountId: string; expiresAt: string }
  | { status: 'redeemed'; accountId: string; apiKeyId: string };

export type PairingCodeCommand =
  | { type: 'IssuePairingCode'; data: { codeHash: string; accountId: string; expiresAt: string } }
  | { type: 'RedeemPairingCode'; data: { codeHash: string; apiKeyId: string } };

export const PAIRING_CODE_TTL_MS = 10 * 60 * 1000; // §2.4

export const initialPairingCodeState = (): PairingCodeState => ({ status: 'unissued' });

export function evolvePairingCode(state: PairingCodeState, event: PairingCodeEvent): PairingCodeState {
  switch (event.type) {
    case 'PairingCodeIssued':
      if (state.status !== 'unissued') return state;
      return { status: 'issued', accountId: event.data.accountId, expiresAt: event.data.expiresAt };
    case 'PairingCodeRedeemed':
      if (state.status !== 'issued') return state;
      return { status: 'redeemed', accountId: state.accountId, apiKeyId: event.data.apiKeyId };
    default: {
      const unexpected: never = event;
      return unexpected;
    }
  }
}

/** §2.4: expired, already used and unknown are one and the same refusal. */
const invalid = () => new IllegalStateError('PAIRING_CODE_INVALID', 'Invalid pairing code');

export function decidePairingCode(
  command: Timed<PairingCodeCommand>,
  state: PairingCodeState,
): PairingCodeEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'IssuePairingCode':
      // 64 random bits: a collision is astronomically unlikely, but never reuse a stream.
      if (state.status !== 'unissued')
        throw new IllegalStateError('PAIRING_CODE_TAKEN', 'Pairing code already issued');
      return [{ type: 'PairingCodeIssued', data: { ...command.data, issuedAt: now } }];
    case 'RedeemPairingCode':
      if (state.status !== 'issued' || Date.parse(now) >= Date.parse(state.expiresAt)) throw invalid();
      return [
        {
          type: 'PairingCodeRedeemed',
          data: {
            codeHash: command.data.codeHash,
            accountId: state.accountId,
            apiKeyId: command.data.apiKeyId,
            redeemedAt: now,
          },
        },
      ];
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const pairingCodeDecider = { initialState: initialPairingCodeState, evolve: evolvePairingCode };
