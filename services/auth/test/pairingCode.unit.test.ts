import { describe, expect, it } from 'vitest';
import { decidePairingCode, pairingCodeDecider, type PairingCodeCommand } from '../src/domain/pairingCode.ts';
import type { PairingCodeState } from '../src/domain/pairingCodeState.ts';
import type { PairingCodeEvent, Timed } from '@oan/domain';
import { deciderSpec } from '@oan/testing';

const given = deciderSpec<PairingCodeState, PairingCodeEvent, Timed<PairingCodeCommand>>(expect, {
  ...pairingCodeDecider,
  decide: decidePairingCode,
});
const issuedAt = '2026-11-29T10:00:00.000Z';
const expiresAt = '2026-11-29T10:10:00.000Z';
const issued: PairingCodeEvent = {
  type: 'PairingCodeIssued',
  data: { codeHash: 'c', accountId: 'acc', issuedAt, expiresAt },
};
const redeem = (now: string): Timed<PairingCodeCommand> => ({
  type: 'RedeemPairingCode',
  data: { codeHash: 'c', apiKeyId: 'key' },
  metadata: { now },
});
const redeemed: PairingCodeEvent = {
  type: 'PairingCodeRedeemed',
  data: { codeHash: 'c', accountId: 'acc', apiKeyId: 'key', redeemedAt: '2026-11-29T10:09:59.999Z' },
};

describe('an unissued pairing code', () => {
  it('is issued for the account that asked', () =>
    given()
      .when({
        type: 'IssuePairingCode',
        data: { codeHash: 'c', accountId: 'acc', expiresAt },
        metadata: { now: issuedAt },
      })
      .then(issued));

  it('cannot be redeemed (unknown code)', () =>
    given().when(redeem(issuedAt)).thenThrows('PAIRING_CODE_INVALID'));
});

describe('an issued pairing code', () => {
  it('is redeemed for its account until it expires', () =>
    given(issued).when(redeem('2026-11-29T10:09:59.999Z')).then(redeemed));

  it('cannot be redeemed from its expiry on', () =>
    given(issued).when(redeem(expiresAt)).thenThrows('PAIRING_CODE_INVALID'));

  it('is never issued a second time', () =>
    given(issued)
      .when({
        type: 'IssuePairingCode',
        data: { codeHash: 'c', accountId: 'other', expiresAt },
        metadata: { now: issuedAt },
      })
      .thenThrows('PAIRING_CODE_TAKEN'));
});

describe('a redeemed pairing code', () => {
  it('cannot be redeemed again', () =>
    given(issued, redeemed).when(redeem(issuedAt)).thenThrows('PAIRING_CODE_INVALID'));
});
