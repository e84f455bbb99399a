import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { noContent, rateLimited, validation } from '@oan/http';
import type { LongPollSlots } from '@oan/projection';
import { normalizePolicy } from '../domain/policy.ts';
import type { RuntimesContext } from '../commands/context.ts';
import { claimOnce, heartbeatJob, type Claimed } from '../commands/jobs.ts';
import { configureRuntime, registerRuntime, removeRuntime, runtimeNotFound } from '../commands/runtimes.ts';
import { listRuntimeJobs } from '../commands/takeover.ts';
import type { Endpoints } from '../dispatch/endpoints.ts';
import { failuresOf } from '../dispatch/store.ts';
import { newEndpoint, refuseEndpoint, verifyEndpoint } from '../dispatch/verify.ts';
import { listRuntimes, ownRuntime, type RuntimeRow } from '../infra/runtimeStore.ts';
import { rethrowMapped } from './errors.ts';
import { HeldClaims } from './heldClaims.ts';
import * as s from './schemas.ts';
import { finish } from './finish.ts';
import { claimText, jobView, runtimeView } from './views.ts';

export interface RuntimeRouteDeps {
  ctx: RuntimesContext;
  authenticator: Authenticator;
  /** How often a held claim looks again without being woken (a lease running out). */
  recheckMs: number;
  /** The account's places for held claims, over every runtimes process; past the cap a claim is 429. */
  heldClaimSlots: LongPollSlots;
  /** Verifies the endpoints of runtimes created with one. */
  endpoints: Endpoints;
}

const TAGS = ['extension'];

/** `/runtimes*` (docs/runtimes.md, ADR 0030), under `/api/v1` with ENABLE_OPEN_API; API key or OAN JWT. */
export const runtimeRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm' });
  const heldClaims = new HeldClaims(ctx, deps.recheckMs, deps.heldClaimSlots);
  const withFailures = async (row: RuntimeRow) =>
    runtimeView(row, row.endpoint === null ? [] : await failuresOf(ctx.orm.em.fork(), [row.id]));

  app.post(
    '/runtimes',
    {
      onRequest: auth,
      schema: {
        summary:
          'Register a runtime: a named consumer of the account decisions (an extension to protocol v1)',
        tags: TAGS,
        description:
          'Every envelope of the account after the registration that carries a `reply` and matches `policy` becomes ' +
          'one job, handed to exactly one worker by `claim` (docs/runtimes.md). The same name and settings again answer ' +
          'the same runtime (200); other settings are `409 RUNTIME_EXISTS`; a ninth is `429 RUNTIME_LIMIT_REACHED`. ' +
          'With `endpoint` (https, a public address) the jobs are pushed there instead of claimed: the answer carries ' +
          'the signing `secret` once, and the endpoint is sent a challenge at once; `state` is `active` if it echoed ' +
          'it, `unverified` otherwise (then `POST /runtimes/{id}/verify`).',
        body: s.runtimeBody,
        response: { 200: s.runtimeCreated, 201: s.runtimeCreated },
      },
    },
    async (req, reply) => {
      const url = req.body.endpoint;
      const refused = url === undefined ? null : refuseEndpoint(deps.endpoints, url);
      if (refused) throw validation(`endpoint: ${refused}`);
      const endpoint = url === undefined ? undefined : newEndpoint(url);
      const { created, row } = await registerRuntime(
        ctx,
        principalOf(req).accountId,
        req.body.name,
        normalizePolicy(req.body.policy),
        endpoint,
      );
      if (!created || !endpoint) return reply.status(created ? 201 : 200).send(await withFailures(row));
      const checked = await verifyEndpoint(deps.endpoints, ctx, row);
      return reply.status(201).send({ ...(await withFailures(checked.row)), secret: endpoint.secret });
    },
  );

  app.get(
    '/runtimes',
    {
      onRequest: auth,
      schema: { summary: "The account's runtimes", tags: TAGS, response: { 200: s.runtimeList } },
    },
    async (req) => {
      const em = ctx.orm.em.fork();
      const rows = await listRuntimes(em, principalOf(req).accountId);
      const failures = await failuresOf(
        em,
        rows.filter((r) => r.endpoint !== null).map((r) => r.id),
      );
      return rows.map((r) => runtimeView(r, failures));
    },
  );

  app.get(
    '/runtimes/:runtimeId',
    {
      onRequest: auth,
      schema: {
        summary: 'One runtime',
        tags: TAGS,
        description: 'An unknown or another account’s id is the byte-identical 404.',
        params: s.runtimeParams,
        response: { 200: s.runtime },
      },
    },
    async (req) => {
      const row = await ownRuntime(ctx.orm.em.fork(), principalOf(req).accountId, req.params.runtimeId);
      if (!row) throw runtimeNotFound();
      return withFailures(row);
    },
  );

  app.delete(
    '/runtimes/:runtimeId',
    {
      onRequest: auth,
      schema: {
        summary: 'Delete a runtime and its jobs',
        tags: TAGS,
        params: s.runtimeParams,
        response: { 204: noContent },
      },
    },
    async (req, reply) => {
      await removeRuntime(ctx, principalOf(req).accountId, req.params.runtimeId);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/runtimes/:runtimeId/configure',
    {
      onRequest: auth,
      schema: {
        summary: "Replace a runtime's policy (compare-and-set on its version)",
        tags: TAGS,
        description:
          'A `version` other than the current one is `409 VERSION_CONFLICT`. Queued jobs the new policy does not want ' +
          'are dropped; leased ones finish under their lease.',
        params: s.runtimeParams,
        body: s.configureBody,
        response: { 200: s.runtime },
      },
    },
    async (req) => {
      const { accountId } = principalOf(req);
      const row = await configureRuntime(
        ctx,
        accountId,
        req.params.runtimeId,
        req.body.version,
        normalizePolicy(req.body.policy),
      );
      ctx.waiters.wake(accountId);
      return runtimeView(row);
    },
  );

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
