import { isoUtc, Migration, sql, TEXT_ARRAY, type EntityManager, type MigrationDef } from '@oan/db';
import type { DeviceKeyEvent } from '@oan/domain';
import type { EventStore, Snapshot, StoredEvent } from '@oan/eventstore';
import {
  evolveDeviceKeys,
  initialDeviceKeysState,
  type DeviceKey,
  type DeviceKeysState,
} from '../domain/deviceKeysState.ts';

/**
 * The key directory's write state, kept in the same transaction as every append to a
 * `devicekeys-<accountId>` stream (as a conversation's, ADR 0013): `device_key_accounts` holds the
 * stream's version and is the row a command locks, so commands on one account's keys queue; its
 * `device_keys` are the decision state. The routes and a sealed send read the keys here, so what
 * `GET …/keys` shows is what a send is checked against (docs/sealed-messages.md). Derived from the
 * events alone: `rebuildDeviceKeys` recomputes it.
 */
class CreateDeviceKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists conversations.device_key_accounts (
      account_id text primary key, version integer not null)`);
    this.addSql(`create table if not exists conversations.device_keys (
      account_id text not null, key_id text not null, public_key text not null, fingerprint text not null,
      published_at timestamptz not null, retired_at timestamptz,
      primary key (account_id, key_id), unique (account_id, public_key))`);
    // the key notices look up an account's open conversations.
    this.addSql(
      'create index if not exists conversations_account_a on conversations.conversations (account_a)',
    );
    this.addSql(
      'create index if not exists conversations_account_b on conversations.conversations (account_b)',
    );
  }
}

export const deviceKeysMigration: MigrationDef = {
  name: 'conversations-0002-device-keys',
  class: CreateDeviceKeys,
};

interface KeyRow {
  keyId: string;
  publicKey: string;
  fingerprint: string;
  publishedAt: string;
  retiredAt: string | null;
}

const KEY_COLUMNS = `key_id as "keyId", public_key as "publicKey", fingerprint,
  ${isoUtc('published_at')} as "publishedAt",
  case when retired_at is null then null else ${isoUtc('retired_at')} end as "retiredAt"`;

/**
 * The account's key directory as the command handler loads and saves it. Loading takes the
 * account's row lock; the row is made first when missing (a second transaction making it waits for
 * the first), so even an account's first two publications queue instead of failing their version check.
 */
export const deviceKeysSnapshot = (accountId: string): Snapshot<DeviceKeysState> => ({
  load: async (em) => {
    await sql(
      em,
      'insert into conversations.device_key_accounts (account_id, version) values (?, 0) on conflict do nothing',
      [accountId],
    );
    const [row] = await sql<{ version: number }>(
      em,
      'select version from conversations.device_key_accounts where account_id = ? for update',
      [accountId],
    );
    if (!row || row.version === 0) return null;
    const keys: DeviceKey[] = await sql<KeyRow>(
      em,
      `select ${KEY_COLUMNS} from conversations.device_keys where account_id = ? order by published_at, key_id`,
      [accountId],
    );
    return { state: { status: 'published', accountId, keys }, version: row.version };
  },
  save: (em, _state, version, appended) => writeDeviceKeys(em, accountId, appended, version),
});

async function writeDeviceKeys(
  em: EntityManager,
  accountId: string,
  appended: readonly StoredEvent[],
  version: number,
): Promise<void> {
  for (const event of appended) {
    const e = { type: event.type, data: event.data } as DeviceKeyEvent;
    if (e.type === 'DeviceKeyPublished') {
      const d = e.data;
      await sql(
        em,
        `insert into conversations.device_keys (account_id, key_id, public_key, fingerprint, published_at)
         values (?, ?, ?, ?, ?) on conflict do nothing`,
        [d.accountId, d.keyId, d.publicKey, d.fingerprint, d.publishedAt],
      );
    } else {
      await sql(
        em,
        `update conversations.device_keys set retired_at = ?
          where account_id = ? and key_id = ? and retired_at is null`,
        [e.data.retiredAt, e.data.accountId, e.data.keyId],
      );
    }
  }
  await sql(
    em,
    `insert into conversations.device_key_accounts (account_id, version) values (?, ?)
     on conflict (account_id) do update set version = excluded.version`,
    [accountId, version],
  );
}

/** A current key as the routes show it (`Key & { accountId }`). */
export interface CurrentKeyRow {
  accountId: string;
  keyId: string;
  publicKey: string;
  fingerprint: string;
  publishedAt: string;
}

/** The current keys of these accounts, oldest first. */
export async function currentKeysOf(em: EntityManager, accountIds: string[]): Promise<CurrentKeyRow[]> {
  return sql<CurrentKeyRow>(
    em,
    `select account_id as "accountId", key_id as "keyId", public_key as "publicKey", fingerprint,
            ${isoUtc('published_at')} as "publishedAt"
       from conversations.device_keys
      where account_id in (select jsonb_array_elements_text(?::jsonb)) and retired_at is null
      order by published_at, account_id, key_id`,
    [JSON.stringify(accountIds)],
  );
}

/** The ids of the account's open conversations (those whose other side hears of its key changes). */
export async function openConversationsOfAccount(em: EntityManager, accountId: string): Promise<string[]> {
  const rows = await sql<{ id: string }>(
    em,
    `select id from conversations.conversations where (account_a = ? or account_b = ?) and status = 'open'
      order by id`,
    [accountId, accountId],
  );
  return rows.map((r) => r.id);
}

/** A device key published or retired, as the key notices tell it. */
export interface KeyChange {
  keyId: string;
  fingerprint: string;
  change: 'published' | 'retired';
  changedAt: string;
}

/**
 * The keys the accounts published or retired at or after `since` (ISO), oldest change first (the
 * ISO text of a UTC time sorts as the time does).
 */
export const keyChangesSince = (em: EntityManager, accountIds: readonly string[], since: string) =>
  sql<KeyChange & { accountId: string }>(
    em,
    `select account_id as "accountId", key_id as "keyId", fingerprint, 'published' as change,
            ${isoUtc('published_at')} as "changedAt"
       from conversations.device_keys where account_id = any(${TEXT_ARRAY}) and published_at >= ?
     union all
     select account_id, key_id, fingerprint, 'retired', ${isoUtc('retired_at')}
       from conversations.device_keys where account_id = any(${TEXT_ARRAY}) and retired_at >= ?
     order by "changedAt", "accountId", "keyId", change`,
    [JSON.stringify(accountIds), since, JSON.stringify(accountIds), since],
  );

/** Recomputes the key directory's write state from the `devicekeys-*` streams (see rebuildWriteState). */
export async function rebuildDeviceKeys(em: EntityManager, store: EventStore, streamIds: string[]) {
  await sql(em, 'truncate conversations.device_key_accounts, conversations.device_keys');
  let count = 0;
  for (const streamId of streamIds) {
    const stored = await store.readStream(em, streamId);
    const last = stored.at(-1);
    if (!last) continue;
    const state = stored
      .map((e) => ({ type: e.type, data: e.data }) as DeviceKeyEvent)
      .reduce(evolveDeviceKeys, initialDeviceKeysState());
    if (state.status === 'none') continue;
    await writeDeviceKeys(em, state.accountId, stored, last.streamVersion);
    count += stored.length;
  }
  return count;
}
