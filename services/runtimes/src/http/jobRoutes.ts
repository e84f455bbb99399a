import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { rateLimited } from '@oan/http';
import type { LongPollSlots } from '@oan/projection';
import type { RuntimesContext } from '../commands/context.ts';
import { claimOnce, heartbeatJob, type Claimed } from '../commands/jobs.ts';
import { listRuntimeJobs } from '../commands/takeover.ts';
import { rethrowMapped } from './errors.ts';
import { finish } from './finish.ts';
import { HeldClaims } from './heldClaims.ts';
import * as s from './schemas.ts';
import { claimText, jobView } from './views.ts';

export interface JobRouteDeps {
  ctx: RuntimesContext;
  authenticator: Authenticator;
  /** How often a held claim looks again without being woken (a lease running out). */
  recheckMs: number;
  /** The account's places for held claims, over every runtimes process; past the cap a claim is 429. */
  heldClaimSlots: LongPollSlots;
}

const TAGS = ['extension'];

/**
 * A runtime's jobs (docs/runtimes.md, ADR 0030): claim one under a lease, heartbeat and finish the
 * lease, list them. Under `/api/v1` with ENABLE_OPEN_API; API key or OAN JWT.
 */
export const jobRoutes: FastifyPluginAsyncZod<JobRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm' });
  const heldClaims = new HeldClaims(ctx, deps.recheckMs, deps.heldClaimSlots);

  app.post(
    '/runtimes/:runtimeId/claim',
    {
      onRequest: auth,
      schema: {
        summary: 'Claim the next job of a runtime under a lease',
        tags: TAGS,
        description:
          'Answers `{job: null}` or the first claimable job in seq order with a new lease (`leaseOwner` = `worker`, a new ' +
          '`version`, `attempts` counted). `event` is the envelope exactly as `GET /events` gives it. With `wait` (0–30 s) ' +
          'the request is held until a job can be claimed or the time is up; concurrent claims never get the same job. ' +
          'A runtime with an endpoint is `409 RUNTIME_HAS_ENDPOINT` (its jobs are pushed).',
        params: s.runtimeParams,
        body: s.claimBody,
        response: { 200: s.claimAnswer },
      },
    },
    async (req, reply) => {
      const { accountId } = principalOf(req);
      const { runtimeId } = req.params;
      const { worker, wait } = req.body;
      // The answer is sent as text with the stored envelope spliced in (claimText); Fastify sends a
      // string as it is, so `event` is never re-serialized.
      const send = (c: Claimed | null) =>
        reply
          .type('application/json; charset=utf-8')
          .send((c ? claimText(c.job, c.envelope) : '{"job":null}') as unknown as s.ClaimAnswer);
      const first = await claimOnce(ctx, accountId, runtimeId, worker);
      if (first || wait === 0) return send(first);

      const gone = new AbortController();
      const onClose = () => gone.abort();
      reply.raw.once('close', onClose);
      try {
        const claimed = await heldClaims.hold(
          { accountId, runtimeId, worker, waitSeconds: wait },
          gone.signal,
        );
        if (claimed === undefined) {
          void reply.header('retry-after', '1');
          throw rateLimited('Too many claims held for this account');
        }
        return send(claimed);
      } finally {
        reply.raw.off('close', onClose);
      }
    },
  );

  app.post(
    '/runtimes/:runtimeId/jobs/:jobId/heartbeat',
    {
      onRequest: auth,
      schema: {
        summary: "Extend a job's lease and record its progress",
        tags: TAGS,
        description:
          'Only the lease holder (`leaseOwner`, `version`) before `leaseUntil`; otherwise `409 LEASE_LOST`. A job whose ' +
          'decision was settled elsewhere meanwhile is closed and answered `409 JOB_SUPERSEDED`: stop working on it.',
        params: s.jobParams,
        body: s.heartbeatBody,
        response: { 200: s.finishAnswer },
      },
    },
    async (req) => {
      const row = await heartbeatJob(
        ctx,
        principalOf(req).accountId,
        req.params.runtimeId,
        req.params.jobId,
        req.body,
      );
      return { job: jobView(row) };
    },
  );

  app.post(
    '/runtimes/:runtimeId/jobs/:jobId/finish',
    {
      onRequest: auth,
      schema: {
        summary:
          "Finish a job's lease: done (`handled`), given back (`released`) or a failed attempt (`failed`)",
        tags: TAGS,
        description:
          'The same body again answers the same result; another body for that lease is `409 FINISH_CONFLICT`; a lease ' +
          'that ran out or was taken over is `409 LEASE_LOST`. `handled` without `reply`: the worker answered through the ' +
          "event's reply path itself. `handled` with `reply` (the body of that route): the server carries it out through " +
          'the owning service exactly once and answers `{job, reply: {status, body}}`; a refusal of the owning service ' +
          'is answered as it gave it and leaves the lease as it was; `503` means recorded, not carried out yet. ' +
          'A job closed as superseded (its decision settled elsewhere), and a `released` or `failed` of a decision ' +
          'settled meanwhile, is `409 JOB_SUPERSEDED`.',
        params: s.jobParams,
        body: s.finishBody,
        response: { 200: s.finishAnswer },
      },
    },
    async (req, reply) => finish(ctx, principalOf(req), req.params, req.body, reply),
  );

  app.get(
    '/runtimes/:runtimeId/jobs',
    {
      onRequest: auth,
      schema: {
        summary: "A runtime's jobs in seq order, with their attempts, leases and progress",
        tags: TAGS,
        description:
          'Open jobs whose decision was settled elsewhere are closed as `superseded` before the list is read; jobs ' +
          'handed to the owner are `owner` with `ownerReason`.',
        params: s.runtimeParams,
        querystring: s.jobsQuery,
        response: { 200: s.jobList },
      },
    },
    async (req) =>
      (await listRuntimeJobs(ctx, principalOf(req).accountId, req.params.runtimeId, req.query)).map(jobView),
  );
};
