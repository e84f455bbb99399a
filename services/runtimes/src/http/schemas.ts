import { z } from 'zod';
import { ENDPOINT_STATES } from '../domain/health.ts';
import { JOB_STATES } from '../domain/lease.ts';
import { GRACE_SECONDS, LEASE_SECONDS, MAX_ATTEMPTS, REPLY_TYPES } from '../domain/policy.ts';

/** A malformed id is answered like an unknown one (404), never with a 400 that tells them apart. */
export const runtimeParams = z.object({ runtimeId: z.string() });
export const jobParams = z.object({ runtimeId: z.string(), jobId: z.string() });

const id = z.string().min(1).max(128);

export const policy = z
  .object({
    types: z
      .array(z.enum(REPLY_TYPES))
      .min(1)
      .max(REPLY_TYPES.length * 4),
    goferIds: z.array(id).min(1).max(100).optional(),
    maxAttempts: z.number().int().min(MAX_ATTEMPTS.min).max(MAX_ATTEMPTS.max).optional(),
    leaseSeconds: z.number().int().min(LEASE_SECONDS.min).max(LEASE_SECONDS.max).optional(),
    graceSeconds: z.number().int().min(GRACE_SECONDS.min).max(GRACE_SECONDS.max).optional(),
  })
  .strict();

export const runtimeBody = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'name: letters, digits, ".", "_" and "-"'),
    policy,
    /** An https URL at a public address: the runtime's jobs are pushed there, not claimed (ADR 0033). */
    endpoint: z.string().max(2048).optional(),
  })
  .strict();

export const configureBody = z.object({ version: z.number().int().min(1), policy }).strict();

export const claimBody = z
  .object({
    worker: id,
    /** Seconds to hold the request while no job is claimable (0: answer at once). */
    wait: z.number().int().min(0).max(30).default(0),
  })
  .strict();

const progress = z
  .object({ percent: z.number().min(0).max(100).optional(), note: z.string().max(500).optional() })
  .strict();

export const heartbeatBody = z
  .object({ leaseOwner: id, version: z.number().int().min(1), progress: progress.optional() })
  .strict();

export const finishBody = z
  .object({
    leaseOwner: id,
    version: z.number().int().min(1),
    outcome: z.enum(['handled', 'released', 'failed']),
    /** With `handled`: the body of the event's own reply route, carried out by the server once. */
    reply: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

export const jobsQuery = z.object({
  state: z.enum(JOB_STATES).optional(),
  after: z
    .string()
    .regex(/^\d{1,18}$/, 'after must be a seq (decimal digits)')
    .default('0'),
  limit: z
    .string()
    .regex(/^\d+$/, 'limit must be an integer between 1 and 200')
    .transform(Number)
    .pipe(z.number().int().min(1).max(200))
    .default(100),
});

export const runtime = z.object({
  runtimeId: z.string(),
  name: z.string(),
  policy: z.object({
    types: z.array(z.enum(REPLY_TYPES)),
    goferIds: z.array(z.string()).optional(),
    maxAttempts: z.number(),
    leaseSeconds: z.number(),
    graceSeconds: z.number(),
  }),
  version: z.number(),
  /** `active` for a runtime without an endpoint; its endpoint's health otherwise (docs/runtimes.md). */
  state: z.enum(ENDPOINT_STATES),
  createdAt: z.string(),
  endpoint: z.string().optional(),
  health: z
    .object({
      lastSeenAt: z.string().nullable(),
      verifiedAt: z.string().nullable(),
      consecutiveFailures: z.number(),
      recentFailures: z.array(
        z.object({
          at: z.string(),
          kind: z.enum(['verification', 'dispatch']),
          jobId: z.string().nullable(),
          statusCode: z.number().nullable(),
          error: z.string(),
        }),
      ),
    })
    .optional(),
});
export const runtimeList = z.array(runtime);

/** The create answer of a runtime with an endpoint carries its signing secret, this once. */
export const runtimeCreated = runtime.extend({
  secret: z
    .string()
    .optional()
    .describe('Standard Webhooks signing secret (`whsec_<base64>`) of the endpoint; shown only when created'),
});

const leaseFields = {
  attempts: z.number(),
  leaseOwner: z.string().nullable(),
  version: z.number(),
  leaseUntil: z.string().nullable(),
};

export const job = z.object({
  jobId: z.string(),
  seq: z.string(),
  eventId: z.string(),
  type: z.enum(REPLY_TYPES),
  goferId: z.string().optional(),
  state: z.enum(JOB_STATES),
  ...leaseFields,
  progress: progress.nullable(),
  /** Only in state `owner`: why the job was handed to the owner. */
  ownerReason: z.enum(['attempts_exhausted', 'no_live_worker']).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const jobList = z.array(job);

/** A job handed to the owner, with its runtime and the envelope (where the owner answers it). */
export const waitingJob = job.extend({
  runtimeId: z.string(),
  runtimeName: z.string(),
  event: z.record(z.string(), z.unknown()),
});
export const waitingList = z.array(waitingJob);

/** A claimed job: `event` is the OAN envelope exactly as `GET /events` serves it. */
export const claimAnswer = z.object({
  job: z.object({ jobId: z.string(), event: z.record(z.string(), z.unknown()), ...leaseFields }).nullable(),
});

export type ClaimAnswer = z.infer<typeof claimAnswer>;

export const finishAnswer = z.object({
  job,
  /** A finish with a `reply`: the owning service's answer to it. */
  reply: z.object({ status: z.number(), body: z.unknown() }).optional(),
});
export type FinishAnswer = z.infer<typeof finishAnswer>;
