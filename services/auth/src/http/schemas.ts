import { z } from 'zod';
import { compareConnectorVersions } from '@oan/protocol';

/** Postgres text and jsonb refuse NUL; refuse it at the edge instead of failing later. */
const text = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL characters');

const email = z.string().max(320).trim().toLowerCase().pipe(z.email());

/** The registration platform: any value is accepted and normalized later; it is never a reason to refuse. */
const platform = z.unknown().optional();

export const requestCodeBody = z.object({ email });
export const verifyBody = z.object({ email, code: text(128), platform });
/**
 * `nonce` (an extension, optional): the nonce of the client's authorization request, which the ID
 * token must carry; without it the token is checked as the spec says.
 */
export const googleBody = z.object({ idToken: text(8192), platform, nonce: text(256).optional() });
export const redeemBody = z.object({ code: text(128) });
// No format rule: a malformed id gets the same 403 as an unknown one.
export const apiKeyParams = z.object({ apiKeyId: z.string() });

export const userSchema = z.object({
  id: z.string(),
  email: z.string().optional(),
  sourcePlatform: z.string(),
  createdAt: z.string(),
});
export const signInResponse = z.object({ user: userSchema, token: z.string() });
export const successResponse = z.object({ success: z.literal(true) });
export const pairingCodeResponse = z.object({ code: z.string(), expiresAt: z.string() });
export const redeemResponse = z.object({ apiKey: z.string(), userId: z.string() });
export const apiKeyList = z.array(
  z.object({
    id: z.string(),
    name: z.string(),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
    lastUsedAt: z.string().nullable(),
  }),
);

const connectorName = text(128).regex(/^[@A-Za-z0-9._/-]+$/);
const connectorVersion = text(64).regex(/^[A-Za-z0-9.+-]+$/);

/** The gateway's connector_outdated notice: only a real "installed < latest" is recorded. */
export const connectorNoticeBody = z
  .object({
    accountId: text(128),
    connector: connectorName,
    installed: connectorVersion,
    latest: connectorVersion,
  })
  .refine((b) => compareConnectorVersions(b.installed, b.latest) === -1, {
    message: 'installed must be an older version than latest',
    path: ['installed'],
  });
export const connectorNoticeResponse = z.object({ notified: z.boolean() });

/** The runtimes process's `runtime_job_waiting` notice (ADR 0032): one per job. */
export const runtimeNoticeBody = z
  .object({
    accountId: text(128),
    runtimeId: z.uuid(),
    runtimeName: text(64),
    jobId: z.uuid(),
    eventId: z.uuid(),
    eventSeq: z.string().regex(/^\d{1,18}$/),
    eventType: text(64),
    goferId: text(128).nullable(),
    reason: z.enum(['attempts_exhausted', 'no_live_worker']),
  })
  .strict();

// Webhooks (ADR 0018).
export const webhookBody = z.object({
  url: z.string().min(1).max(2048).pipe(z.url()),
  description: text(500).optional(),
});
// No format rule: a malformed id gets the same 403 as an unknown or foreign one.
export const webhookParams = z.object({ webhookId: z.string() });
const webhookFields = {
  id: z.string(),
  url: z.string(),
  description: z.string().optional(),
  createdAt: z.string(),
};
export const webhookCreated = z.object({
  ...webhookFields,
  secret: z.string().describe('Standard Webhooks signing secret (`whsec_<base64>`); shown only here'),
});
export const webhookList = z.array(
  z.object({
    ...webhookFields,
    disabledAt: z
      .string()
      .nullable()
      .describe('Set when every attempt failed for the give-up period; the endpoint gets nothing more'),
  }),
);
export const deliveryList = z.array(
  z.object({
    eventId: z.string(),
    seq: z.string(),
    attempt: z.number().int().describe('1 for the first attempt at this envelope'),
    statusCode: z.number().int().nullable().describe('The answer’s status, null when none came'),
    error: z.string().nullable().describe('Why no answer came (timeout, refused address, connection error)'),
    latencyMs: z.number().int(),
    attemptedAt: z.string(),
    nextRetryAt: z.string().nullable(),
  }),
);
