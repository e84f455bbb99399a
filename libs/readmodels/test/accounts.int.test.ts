import { describe, expect, it } from 'vitest';
import type { AuthEvent } from '@oan/domain';
import { authOf } from './support/auth.ts';
import { T0 } from './support/events.ts';
import { authProjection } from '../src/accounts/index.ts';
import { projectionSpec } from './support/projectionSpec.ts';

const accountId = `acc-${Math.random().toString(16).slice(2)}`;
const auth = authOf(accountId);
// The notices write no row; the state compared is the projector's own tables staying empty.
const spec = projectionSpec(authProjection, {
  rows: { oanEvents: 'select count(*)::int as n from read.oan_event' },
});

describe('the account notices', () => {
  it('sends a system_notice to the account for a ban, an outdated connector, a disabled webhook and a waiting runtime job', async () => {
    const notes = await spec.when(
      auth.AccountRegistered(),
      auth.AccountBanned(),
      auth.ConnectorOutdatedNoticed(),
      auth.WebhookDisabled(),
      auth.RuntimeJobWaitingNoticed(),
    );
    expect(notes).toEqual([
      {
        recipient: accountId,
        type: 'system_notice',
        source: 'platform',
        payload: { kind: 'account_banned' },
        createdAt: T0,
      },
      {
        recipient: accountId,
        type: 'system_notice',
        source: 'platform',
        payload: { kind: 'connector_outdated', connector: 'dsh', installed: '1.0.0', latest: '1.2.0' },
        createdAt: T0,
      },
      {
        recipient: accountId,
        type: 'system_notice',
        source: 'platform',
        payload: {
          kind: 'webhook_disabled',
          webhookId: 'w1',
          url: 'https://hooks.example/oan',
          reason: 'failing',
        },
        createdAt: T0,
      },
      {
        recipient: accountId,
        type: 'system_notice',
        source: 'platform',
        payload: {
          kind: 'runtime_job_waiting',
          runtimeId: 'r1',
          runtimeName: 'agent',
          jobId: 'j1',
          eventId: 'e1',
          eventSeq: '7',
          eventType: 'gofer_question',
          goferId: 'g1',
          reason: 'attempts_exhausted',
        },
        createdAt: T0,
      },
    ]);
  });

  it('has nothing to say of keys and pairing codes (the auth service keeps those itself)', async () => {
    const notes = await spec.when(
      auth.ApiKeyIssued(),
      auth.ApiKeyRevoked(),
      auth.PairingCodeIssued(),
      auth.PairingCodeRedeemed(),
    );
    expect(notes).toEqual([]);
  });

  spec.appliedTwice<AuthEvent>({
    AccountRegistered: { event: () => auth.AccountRegistered() },
    ApiKeyIssued: { event: () => auth.ApiKeyIssued() },
    ApiKeyRevoked: { event: () => auth.ApiKeyRevoked() },
    AccountBanned: { event: () => auth.AccountBanned() },
    ConnectorOutdatedNoticed: { event: () => auth.ConnectorOutdatedNoticed() },
    WebhookDisabled: { event: () => auth.WebhookDisabled() },
    RuntimeJobWaitingNoticed: { event: () => auth.RuntimeJobWaitingNoticed() },
    PairingCodeIssued: { event: () => auth.PairingCodeIssued() },
    PairingCodeRedeemed: { event: () => auth.PairingCodeRedeemed() },
  });
});
