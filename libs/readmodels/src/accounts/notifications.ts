import type { AuthEvent } from '@oan/domain';
import type { NotificationSpec, StoredEvent } from '../types.ts';

type Event<T extends AuthEvent['type']> = StoredEvent<Extract<AuthEvent, { type: T }>>;

/** An account notice (`system_notice`) to the account the event is about. */
const notice = (
  { partitionKey, occurredAt }: { partitionKey: string; occurredAt: string },
  payload: Record<string, unknown>,
): NotificationSpec[] => [
  { recipient: partitionKey, type: 'system_notice', source: 'platform', payload, createdAt: occurredAt },
];

/** The account was banned. */
export const accountBanned = (event: Event<'AccountBanned'>) => notice(event, { kind: 'account_banned' });

/** The outdated-connector notice: payload {kind, connector, installed, latest}. */
export const connectorOutdated = (event: Event<'ConnectorOutdatedNoticed'>) =>
  notice(event, {
    kind: 'connector_outdated',
    connector: event.data.connector,
    installed: event.data.installed,
    latest: event.data.latest,
  });

/**
 * A runtime job went to the owner (ADR 0032): payload {kind, runtimeId, runtimeName, jobId, eventId,
 * eventSeq, eventType, goferId?, reason}.
 */
export const runtimeJobWaiting = ({ data: d, ...event }: Event<'RuntimeJobWaitingNoticed'>) =>
  notice(event, {
    kind: 'runtime_job_waiting',
    runtimeId: d.runtimeId,
    runtimeName: d.runtimeName,
    jobId: d.jobId,
    eventId: d.eventId,
    eventSeq: d.eventSeq,
    eventType: d.eventType,
    ...(d.goferId === null ? {} : { goferId: d.goferId }),
    reason: d.reason,
  });

/** A webhook that kept failing was disabled: payload {kind, webhookId, url, reason}. */
export const webhookDisabled = ({ data: d, ...event }: Event<'WebhookDisabled'>) =>
  notice(event, { kind: 'webhook_disabled', webhookId: d.webhookId, url: d.url, reason: d.reason });
