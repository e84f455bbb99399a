import type { Decider, DeviceKeyEvent, Timed } from '@oan/domain';
import { MAX_DEVICE_KEYS } from '@oan/sealed';
import {
  currentKeys,
  evolveDeviceKeys,
  initialDeviceKeysState,
  type DeviceKey,
  type DeviceKeysState,
} from './deviceKeysState.ts';
import { ConflictError, NotFoundError } from './errors.ts';

/**
 * The key directory's decisions (docs/sealed-messages.md). They see the account's keys loaded under
 * its lock (src/infra/deviceKeys.ts), so two racing publications of one keyId, or of a ninth key,
 * are decided one after the other: one wins, the other is refused.
 */

export interface PublishDeviceKey {
  accountId: string;
  keyId: string;
  publicKey: string;
  /** Derived from the key by the caller (SHA-256 is not the domain's to compute). */
  fingerprint: string;
}

export interface RetireDeviceKey {
  accountId: string;
  keyId: string;
}

export type DeviceKeysCommand =
  { type: 'PublishDeviceKey'; data: PublishDeviceKey } | { type: 'RetireDeviceKey'; data: RetireDeviceKey };

const keysOf = (state: DeviceKeysState): DeviceKey[] => (state.status === 'none' ? [] : state.keys);

/**
 * Publishing: the same pair again is a retry (nothing new). A keyId taken by another key or
 * retired, and a public key already under another keyId, are refused; so is a ninth current key.
 */
export function decidePublish(
  state: DeviceKeysState,
  input: PublishDeviceKey,
  now: string,
): DeviceKeyEvent[] {
  const same = keysOf(state).find((k) => k.keyId === input.keyId);
  if (same) {
    if (same.retiredAt !== null)
      throw new ConflictError('KEY_ID_IN_USE', 'This keyId was retired; publish the key under a new keyId');
    if (same.publicKey === input.publicKey) return [];
    throw new ConflictError('KEY_ID_IN_USE', 'This keyId is published with another key');
  }
  if (keysOf(state).some((k) => k.publicKey === input.publicKey))
    throw new ConflictError('KEY_ID_IN_USE', 'This public key is already published under another keyId');
  if (currentKeys(state).length >= MAX_DEVICE_KEYS)
    throw new ConflictError(
      'TOO_MANY_KEYS',
      `An account has at most ${MAX_DEVICE_KEYS} current keys; retire one first`,
    );
  return [{ type: 'DeviceKeyPublished', data: { ...input, publishedAt: now } }];
}

/** Retiring: a key already retired is retired (nothing new); a keyId never published is unknown. */
export function decideRetire(state: DeviceKeysState, input: RetireDeviceKey, now: string): DeviceKeyEvent[] {
  const key = keysOf(state).find((k) => k.keyId === input.keyId);
  if (!key) throw new NotFoundError('KEY_NOT_FOUND', 'Key not found');
  if (key.retiredAt !== null) return [];
  const { accountId, keyId } = input;
  return [
    { type: 'DeviceKeyRetired', data: { accountId, keyId, fingerprint: key.fingerprint, retiredAt: now } },
  ];
}

export function decideDeviceKeys(
  command: Timed<DeviceKeysCommand>,
  state: DeviceKeysState,
): DeviceKeyEvent[] {
  const now = command.metadata.now;
  switch (command.type) {
    case 'PublishDeviceKey':
      return decidePublish(state, command.data, now);
    case 'RetireDeviceKey':
      return decideRetire(state, command.data, now);
    default: {
      const unexpected: never = command;
      throw new Error(`Unknown command ${(unexpected as { type: string }).type}`);
    }
  }
}

export const deviceKeysDecider: Decider<DeviceKeysState, DeviceKeyEvent, Timed<DeviceKeysCommand>> = {
  initialState: initialDeviceKeysState,
  evolve: evolveDeviceKeys,
  decide: decideDeviceKeys,
};
