import { api, ApiError, need } from '../api/client';
import { keysOf, saveKey, type DeviceKey } from './keyStore';
import { loadSealed } from './lib';

/**
 * This browser's current device key for the account, made on first use and published with
 * `PUT /keys/{keyId}`. The key is stored before it is published, so a publication cut short is
 * retried with the same pair (the server answers 200 to a pair it already holds). A key the server
 * refuses as retired (another device retired it) is kept to open older messages, and a new one is
 * made in its place.
 */
export function ensureDeviceKey(accountId: string, again = false): Promise<DeviceKey> {
  const running = ensuring.get(accountId);
  if (running && !again) return running;
  // One tab at a time: two tabs of one browser must not each make a key.
  const started = new Promise<DeviceKey>((resolve, reject) =>
    navigator.locks.request(`oan.sealed.${accountId}`, () => publishCurrent(accountId).then(resolve, reject)),
  );
  ensuring.set(accountId, started);
  started.catch(() => ensuring.delete(accountId));
  return started;
}

const ensuring = new Map<string, Promise<DeviceKey>>();

async function publishCurrent(accountId: string): Promise<DeviceKey> {
  for (let tries = 1; ; tries++) {
    const current = (await keysOf(accountId)).filter((k) => k.retiredAt === null).pop();
    const key = current ?? (await makeKey(accountId));
    const res = await api.PUT('/api/v1/keys/{keyId}', {
      params: { path: { keyId: key.keyId } },
      body: { publicKey: key.publicKey },
    });
    if (res.response.ok) {
      if (key.publishedAt !== null) return key;
      const published = { ...key, publishedAt: new Date().toISOString() };
      await saveKey(published);
      return published;
    }
    try {
      need(res, 'publish the key');
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'KEY_ID_IN_USE') || tries === 3) throw err;
    }
    await saveKey({ ...key, retiredAt: new Date().toISOString() });
  }
}

async function makeKey(accountId: string): Promise<DeviceKey> {
  const { toBase64url, webcryptoSealer } = await loadSealed();
  const pair = await webcryptoSealer.generateDeviceKey();
  const key: DeviceKey = {
    keyId: crypto.randomUUID(),
    accountId,
    publicKey: toBase64url(pair.publicKey),
    privateKey: pair.privateKey,
    createdAt: new Date().toISOString(),
    publishedAt: null,
    retiredAt: null,
  };
  await saveKey(key);
  return key;
}
