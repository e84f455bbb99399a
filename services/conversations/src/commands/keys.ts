import { commandHandler, type CommandHandler } from '@oan/eventstore';
import { deviceKeysStreamId } from '@oan/domain';
import { deviceKeysDecider, type DeviceKeysCommand } from '../domain/deviceKeys.ts';
import type { DeviceKey, DeviceKeysState } from '../domain/deviceKeysState.ts';
import { deviceKeysSnapshot } from '../infra/deviceKeys.ts';
import { fingerprintOf } from '../infra/keyMaterial.ts';
import { WRITE_SOURCE, type ConversationContext } from './context.ts';

/**
 * The key directory's command handler: load → decide → append on `devicekeys-<accountId>`, with
 * the account's write state as the state (locked, so its commands queue), saved with the append
 * (src/infra/deviceKeys.ts). Keyed by the account; its position is remembered for its next reads.
 */
const deviceKeyCommands = (ctx: ConversationContext): CommandHandler<DeviceKeysState, DeviceKeysCommand> =>
  commandHandler({
    orm: ctx.orm,
    store: ctx.store,
    decider: deviceKeysDecider,
    now: ctx.now,
    partitionKey: (_state, _events, command) => command.data.accountId,
    remember: (last, _callers, command) =>
      ctx.writes.remember(command.data.accountId, WRITE_SOURCE, last.position),
  });

/** Publishing a device key: the key, and whether it is new (a retry of the same pair is not). */
export async function publishKey(
  ctx: ConversationContext,
  input: { accountId: string; keyId: string; publicKey: string },
): Promise<{ created: boolean; key: DeviceKey }> {
  const data = { ...input, fingerprint: fingerprintOf(input.publicKey) };
  const { state, appended } = await deviceKeyCommands(ctx)(
    deviceKeysStreamId(input.accountId),
    { type: 'PublishDeviceKey', data },
    { snapshot: deviceKeysSnapshot(input.accountId) },
  );
  const key = state.status === 'published' ? state.keys.find((k) => k.keyId === input.keyId) : undefined;
  if (!key) throw new Error('A published key is in the state');
  return { created: appended.length > 0, key };
}

/** Retiring a device key (already retired: nothing new). */
export async function retireKey(
  ctx: ConversationContext,
  input: { accountId: string; keyId: string },
): Promise<void> {
  await deviceKeyCommands(ctx)(
    deviceKeysStreamId(input.accountId),
    { type: 'RetireDeviceKey', data: input },
    { snapshot: deviceKeysSnapshot(input.accountId) },
  );
}
