import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGofer } from '../src/commands/createGofer.ts';
import { publishOnRelay, recordRelayTurn } from '../src/commands/relay.ts';
import { KeySealer } from '../src/relay/keys.ts';
import { startGoferFleet, type GoferFleet } from './helpers.ts';

/**
 * Relay turns are recorded from a bounded view of the Gofer (never its whole stream). Many callers
 * answered at once must all be recorded: a turn whose row is lost was a brain call for nothing.
 */
let fleet: GoferFleet;
beforeAll(async () => {
  fleet = await startGoferFleet();
});
afterAll(async () => fleet?.close());

describe('a published Gofer, when 16 callers’ turns are recorded at once', () => {
  it('records every one (they queue on the Gofer, none fails its version check)', async () => {
    const { accountId } = await fleet.account('dsh');
    const { goferId } = await createGofer(fleet.ctx, { accountId });
    await publishOnRelay(fleet.ctx, new KeySealer('s'.repeat(32)), { accountId, goferId });
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) =>
        recordRelayTurn(fleet.ctx, {
          goferId,
          caller: `0x${String(i).padStart(2, '0').repeat(32)}`,
          asked: `question ${i}`,
          answered: `answer ${i}`,
        }),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const rows = (await fleet.events()).filter(
      (e) => e.streamId === `gofer-${goferId}` && (e.data as { kind?: string }).kind === 'relay',
    );
    expect(rows).toHaveLength(16);
  });
});
