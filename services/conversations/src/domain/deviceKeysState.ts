import type { DeviceKeyEvent } from '@oan/domain';

/**
 * Stream `devicekeys-<accountId>`: an account's key directory. Every key it ever published stays in
 * the state, retired ones with `retiredAt`, because a keyId and a public key are never published
 * again. The state is the write side's rows (`conversations.device_keys`, src/infra/deviceKeys.ts),
 * loaded under the account's lock instead of folding the stream.
 */
export interface DeviceKey {
  keyId: string;
  publicKey: string;
  fingerprint: string;
  publishedAt: string;
  retiredAt: string | null;
}

export type DeviceKeysState =
  { status: 'none' } | { status: 'published'; accountId: string; keys: DeviceKey[] };

export const initialDeviceKeysState = (): DeviceKeysState => ({ status: 'none' });

/** The keys not retired, oldest first. */
export const currentKeys = (state: DeviceKeysState): DeviceKey[] =>
  state.status === 'none' ? [] : state.keys.filter((k) => k.retiredAt === null);

export function evolveDeviceKeys(state: DeviceKeysState, event: DeviceKeyEvent): DeviceKeysState {
  switch (event.type) {
    case 'DeviceKeyPublished': {
      const { accountId, keyId, publicKey, fingerprint, publishedAt } = event.data;
      const keys = state.status === 'none' ? [] : state.keys;
      if (keys.some((k) => k.keyId === keyId)) return state;
      const key = { keyId, publicKey, fingerprint, publishedAt, retiredAt: null };
      return { status: 'published', accountId, keys: [...keys, key] };
    }
    case 'DeviceKeyRetired': {
      if (state.status === 'none') return state;
      const { keyId, retiredAt } = event.data;
      const keys = state.keys.map((k) =>
        k.keyId === keyId && k.retiredAt === null ? { ...k, retiredAt } : k,
      );
      return { ...state, keys };
    }
    default: {
      const unexpected: never = event;
      return unexpected;
    }
  }
}
