import { openDB, type DBSchema, type IDBPDatabase } from 'idb';

/**
 * This browser's device keys of sealed messages (docs/sealed-messages.md), in IndexedDB: the private
 * half is a WebCrypto key made non-extractable, which IndexedDB keeps as it is (its bytes never reach
 * script). Keys are never deleted here, so messages sealed to an older key still open.
 */
export interface DeviceKey {
  keyId: string;
  accountId: string;
  /** base64url of the 32 raw public-key bytes, as `PUT /keys/{keyId}` publishes them. */
  publicKey: string;
  privateKey: CryptoKey;
  createdAt: string;
  /** When the server first took it (`PUT` answered 200 or 201); null until then. */
  publishedAt: string | null;
  /** When the server refused it as retired (`409 KEY_ID_IN_USE`): it only opens older messages now. */
  retiredAt: string | null;
}

/** A key of the other side as the operator last accepted it. */
export interface CheckedKey {
  keyId: string;
  fingerprint: string;
}

/** The other side's keys the operator last accepted in one conversation (the key-change warning). */
interface CheckedKeys {
  accountId: string;
  conversationId: string;
  keys: CheckedKey[];
}

interface SealedDb extends DBSchema {
  keys: { key: string; value: DeviceKey; indexes: { accountId: string } };
  checked: { key: [string, string]; value: CheckedKeys };
}

let db: Promise<IDBPDatabase<SealedDb>> | null = null;

function open(): Promise<IDBPDatabase<SealedDb>> {
  db ??= openDB<SealedDb>('oan.sealed', 1, {
    upgrade(d) {
      d.createObjectStore('keys', { keyPath: 'keyId' }).createIndex('accountId', 'accountId');
      d.createObjectStore('checked', { keyPath: ['accountId', 'conversationId'] });
    },
  });
  return db;
}

/** Every key this browser holds for the account, oldest first. */
export async function keysOf(accountId: string): Promise<DeviceKey[]> {
  const all = await (await open()).getAllFromIndex('keys', 'accountId', accountId);
  return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

export async function saveKey(key: DeviceKey): Promise<void> {
  await (await open()).put('keys', key);
}

export async function checkedKeys(accountId: string, conversationId: string): Promise<CheckedKey[] | null> {
  return (await (await open()).get('checked', [accountId, conversationId]))?.keys ?? null;
}

export async function saveCheckedKeys(accountId: string, conversationId: string, keys: CheckedKey[]) {
  const plain = keys.map(({ keyId, fingerprint }) => ({ keyId, fingerprint }));
  await (await open()).put('checked', { accountId, conversationId, keys: plain });
}
