/**
 * The auth context's events. Each `data` shape matches its Avro record in
 * schemas/auth/<Type>.v1.avsc field for field (nullable fields are present with `null`). Only hashes
 * of API keys and pairing codes ever appear here.
 */
export interface AccountRegistered {
  type: 'AccountRegistered';
  data: {
    accountId: string;
    realm: string;
    email: string | null;
    googleSub: string | null;
    sourcePlatform: string;
    /** How the account was created: `email` or `google`. */
    method: string;
    registeredAt: string;
  };
}

export interface ApiKeyIssued {
  type: 'ApiKeyIssued';
  data: {
    accountId: string;
    apiKeyId: string;
    keyHash: string;
    name: string;
    permissions: string[];
    pairingCodeHash: string;
    issuedAt: string;
    expiresAt: string | null;
  };
}

export interface ApiKeyRevoked {
  type: 'ApiKeyRevoked';
  data: { accountId: string; apiKeyId: string; revokedAt: string };
}

export interface AccountBanned {
  type: 'AccountBanned';
  data: { accountId: string; reason: string | null; bannedAt: string };
}

export interface ConnectorOutdatedNoticed {
  type: 'ConnectorOutdatedNoticed';
  data: { accountId: string; connector: string; installed: string; latest: string; noticedAt: string };
}

/**
 * A webhook endpoint failed for the whole give-up period and stops receiving deliveries;
 * the account is told with a `system_notice` (`webhook_disabled`). The secret never enters the log.
 */
export interface WebhookDisabled {
  type: 'WebhookDisabled';
  data: { accountId: string; webhookId: string; url: string; reason: string; disabledAt: string };
}

/**
 * A runtime's job went to the owner (attempts used up, or no live worker for the grace, ADR 0032);
 * the account is told once per job with a `system_notice` (`runtime_job_waiting`).
 */
export interface RuntimeJobWaitingNoticed {
  type: 'RuntimeJobWaitingNoticed';
  data: {
    accountId: string;
    runtimeId: string;
    runtimeName: string;
    jobId: string;
    eventId: string;
    eventSeq: string;
    eventType: string;
    goferId: string | null;
    reason: string;
    noticedAt: string;
  };
}

export type AccountEvent =
  | AccountRegistered
  | ApiKeyIssued
  | ApiKeyRevoked
  | AccountBanned
  | ConnectorOutdatedNoticed
  | WebhookDisabled
  | RuntimeJobWaitingNoticed;

export interface PairingCodeIssued {
  type: 'PairingCodeIssued';
  data: { codeHash: string; accountId: string; issuedAt: string; expiresAt: string };
}

export interface PairingCodeRedeemed {
  type: 'PairingCodeRedeemed';
  data: { codeHash: string; accountId: string; apiKeyId: string; redeemedAt: string };
}

export type PairingCodeEvent = PairingCodeIssued | PairingCodeRedeemed;

export type AuthEvent = AccountEvent | PairingCodeEvent;

export const AUTH_EVENT_TYPES = [
  'AccountRegistered',
  'ApiKeyIssued',
  'ApiKeyRevoked',
  'AccountBanned',
  'ConnectorOutdatedNoticed',
  'WebhookDisabled',
  'RuntimeJobWaitingNoticed',
  'PairingCodeIssued',
  'PairingCodeRedeemed',
] as const satisfies readonly AuthEvent['type'][];
