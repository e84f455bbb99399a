import type { Decider, PairingCodeEvent, Timed } from '@oan/domain';
import { IllegalStateError } from './errors.ts';
import { evolvePairingCode, initialPairingCodeState, type PairingCodeState } from './pairingCodeState.ts';

export type PairingCodeCommand =
  | { type: 'IssuePairingCode'; data: { codeHash: string; accountId: string; expiresAt: string } }
  | { type: 'RedeemPairingCode'; data: { codeHash: string; apiKeyId: string } };

export const PAIRING_CODE_TTL_MS = 10 * 60 * 1000; // a pairing code lives 10 minutes

type Data<T extends PairingCodeCommand['type']> = Extract<PairingCodeCommand, { type: T }>['data'];

/** Pairing codes: expired, already used and unknown are one and the same refusal. */
const invalid = () => new IllegalStateError('PAIRING_CODE_INVALID', 'Invalid pairing code');

export function issuePairingCode(
  state: PairingCodeState,
  d: Data<'IssuePairingCode'>,
  now: string,
): PairingCodeEvent[] {
  // 64 random bits: a collision is astronomically unlikely, but never reuse a stream.
  if (state.status !== 'unissued')
    throw new IllegalStateError('PAIRING_CODE_TAKEN', 'Pairing code already issued');
  return [{ type: 'PairingCodeIssued', data: { ...d, issuedAt: now } }];
}

export function redeemPairingCode(
  state: PairingCodeState,
  d: Data<'RedeemPairingCode'>,
  now: string,
): PairingCodeEvent[] {
  if (state.status !== 'issued' || Date.parse(now) >= Date.parse(state.expiresAt)) throw invalid();
  return [
    {
      type: 'PairingCodeRedeemed',
      data: { codeHash: d.codeHash, accountId: state.accountId, apiKeyId: d.apiKeyId, redeemedAt: now },
    },
  ];
}

export function decidePairingCode(
  command: Timed<PairingCodeCommand>,
  state: PairingCodeState,
): PairingCodeEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'IssuePairingCode':
      return issuePairingCode(state, command.data, now);
    case 'RedeemPairingCode':
      return redeemPairingCode(state, command.data, now);
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const pairingCodeDecider: Decider<PairingCodeState, PairingCodeEvent, Timed<PairingCodeCommand>> = {
  initialState: initialPairingCodeState,
  evolve: evolvePairingCode,
  decide: decidePairingCode,
};
