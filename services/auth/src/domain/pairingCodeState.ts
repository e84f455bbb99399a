import type { PairingCodeEvent } from '@oan/domain';

/** Stream `pairing-code-<sha256(code)>`: the code itself is never stored. */
export type PairingCodeState =
  | { status: 'unissued' }
  | { status: 'issued'; accountId: string; expiresAt: string }
  | { status: 'redeemed'; accountId: string; apiKeyId: string };

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
