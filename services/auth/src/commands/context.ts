import type { MikroORM } from '@oan/db';
import { commandHandler, type CommandHandler, type EventStore, type NewEvent } from '@oan/eventstore';
import type { AuthEvent } from '@oan/domain';
import { accountDecider, type AccountCommand } from '../domain/account.ts';
import type { AccountState } from '../domain/accountState.ts';
import { pairingCodeDecider, type PairingCodeCommand } from '../domain/pairingCode.ts';
import type { PairingCodeState } from '../domain/pairingCodeState.ts';
import { projectCredentials } from '../infra/credentialsProjection.ts';

/** What every command handler needs: the database, the auth event store and the clock. */
export interface AuthContext {
  orm: MikroORM;
  store: EventStore;
  now: () => Date;
}

/** Every auth event names its account, whose partition orders them (the Kafka key). */
const accountOf = (_state: unknown, events: readonly AuthEvent[]) => events[0]!.data.accountId;

/** An account's commands on `account-<accountId>`; the credential view is written in the append's transaction. */
export const accountCommands = (ctx: AuthContext): CommandHandler<AccountState, AccountCommand> =>
  commandHandler({
    orm: ctx.orm,
    store: ctx.store,
    now: ctx.now,
    decider: accountDecider,
    partitionKey: accountOf,
    inline: projectCredentials,
  });

/** A pairing code's commands on `pairing-code-<sha256(code)>`, keyed by the account it was issued to. */
export const pairingCodeCommands = (ctx: AuthContext): CommandHandler<PairingCodeState, PairingCodeCommand> =>
  commandHandler({
    orm: ctx.orm,
    store: ctx.store,
    now: ctx.now,
    decider: pairingCodeDecider,
    partitionKey: accountOf,
  });

/** Stamps domain events for a multi-stream append; `accountId` is the Kafka key that orders them. */
export function toNewEvents(accountId: string, occurredAt: string, events: AuthEvent[]): NewEvent[] {
  return events.map((e) => ({ type: e.type, data: e.data, partitionKey: accountId, occurredAt }));
}
