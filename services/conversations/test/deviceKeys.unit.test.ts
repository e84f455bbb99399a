import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DeviceKeyEvent } from '@oan/domain';
import { deciderSpec } from '@oan/testing';
import { deviceKeysDecider, type DeviceKeysCommand } from '../src/domain/deviceKeys.ts';
import type { DeviceKeysState } from '../src/domain/deviceKeysState.ts';
import { fingerprintOf, isLowOrderPoint } from '../src/infra/keyMaterial.ts';

const NOW = '2026-12-03T09:00:00.000Z';
const ACC = 'acc-k';
const given = deciderSpec(expect, {
  ...deviceKeysDecider,
  decide: (command: DeviceKeysCommand, state: DeviceKeysState) =>
    deviceKeysDecider.decide({ ...command, metadata: { now: NOW } }, state),
});

const keyId = (n: number) => `0000000${n}-0000-4000-8000-00000000000${n}`;
const pk = (n: number) => `key-${n}`.padEnd(43, 'A');
const fp = (n: number) => `${n}${n}${n}${n} `.repeat(10).trim();
const publish = (n: number, key = pk(n)): DeviceKeysCommand => ({
  type: 'PublishDeviceKey',
  data: { accountId: ACC, keyId: keyId(n), publicKey: key, fingerprint: fp(n) },
});
const retire = (n: number): DeviceKeysCommand => ({
  type: 'RetireDeviceKey',
  data: { accountId: ACC, keyId: keyId(n) },
});
const published = (n: number, at = NOW): DeviceKeyEvent => ({
  type: 'DeviceKeyPublished',
  data: { accountId: ACC, keyId: keyId(n), publicKey: pk(n), fingerprint: fp(n), publishedAt: at },
});
const retired = (n: number): DeviceKeyEvent => ({
  type: 'DeviceKeyRetired',
  data: { accountId: ACC, keyId: keyId(n), fingerprint: fp(n), retiredAt: NOW },
});
const eight = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => published(n));

describe('an account without keys', () => {
  it('publishes a key', () => {
    given().when(publish(1)).then(published(1));
  });
  it('has no key to retire', () => {
    given().when(retire(1)).thenThrows('KEY_NOT_FOUND');
  });
});

describe('an account with a current key', () => {
  it('answers the same pair again with nothing new (a retry)', () => {
    given(published(1)).when(publish(1)).thenNothing();
  });
  it('refuses its keyId with another key, and its key under another keyId', () => {
    given(published(1))
      .when(publish(1, pk(2)))
      .thenThrows('KEY_ID_IN_USE');
    given(published(1))
      .when(publish(2, pk(1)))
      .thenThrows('KEY_ID_IN_USE');
  });
  it('retires it once, naming its fingerprint', () => {
    given(published(1)).when(retire(1)).then(retired(1));
    given(published(1), retired(1)).when(retire(1)).thenNothing();
  });
  it('does not retire a key it never published', () => {
    given(published(1)).when(retire(2)).thenThrows('KEY_NOT_FOUND');
  });
});

describe('an account whose key was retired', () => {
  it('never publishes that keyId again, nor that key under a new keyId', () => {
    given(published(1), retired(1)).when(publish(1)).thenThrows('KEY_ID_IN_USE');
    given(published(1), retired(1))
      .when(publish(1, pk(2)))
      .thenThrows('KEY_ID_IN_USE');
    given(published(1), retired(1))
      .when(publish(2, pk(1)))
      .thenThrows('KEY_ID_IN_USE');
  });
});

describe('an account with eight current keys', () => {
  it('refuses a ninth until one is retired', () => {
    given(...eight)
      .when(publish(9))
      .thenThrows('TOO_MANY_KEYS');
    given(...eight, retired(3))
      .when(publish(9))
      .then(published(9));
  });
  it('still answers a retry of one of them', () => {
    given(...eight)
      .when(publish(8))
      .thenNothing();
  });
});

describe('key material', () => {
  const raw = (hex: string) => Buffer.from(hex, 'hex');
  const ff = (first: number) =>
    Buffer.concat([Buffer.from([first]), Buffer.alloc(30, 0xff), Buffer.from([0x7f])]);
  // libsodium's list of X25519 points of small order, and their encodings with the top bit set.
  const lowOrder = [
    Buffer.alloc(32),
    Buffer.concat([Buffer.from([1]), Buffer.alloc(31)]),
    raw('e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800'),
    raw('5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157'),
    ff(0xec),
    ff(0xed),
    ff(0xee),
  ].flatMap((p) => {
    const high = Buffer.from(p);
    high[31]! |= 0x80;
    return [p, high];
  });

  it('tells every low-order point from real public keys', () => {
    for (const p of lowOrder) expect(isLowOrderPoint(p.toString('base64url')), p.toString('hex')).toBe(true);
    for (let i = 0; i < 20; i++) {
      const { x } = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' });
      expect(isLowOrderPoint(x!)).toBe(false);
    }
  });

  it('fingerprints the first 20 bytes of SHA-256 over the raw key, ten groups of four', () => {
    // SHA-256 of 32 zero bytes is 66687aad f862bd77 6c8fc18b 8e9f8e20 08971485 6ee233b3 …
    expect(fingerprintOf(Buffer.alloc(32).toString('base64url'))).toBe(
      '6668 7aad f862 bd77 6c8f c18b 8e9f 8e20 0897 1485',
    );
  });
});
