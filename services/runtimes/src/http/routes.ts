import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { noContent, rateLimited } from '@oan/http';
import { normalizePolicy } from '../domain/policy.ts';
import type { RuntimesContext } from '../commands/context.ts';
import { catchUp, claimOnce, heartbeatJob, type Claimed } from '../commands/jobs.ts';
import { configureRuntime, registerRuntime, removeRuntime, runtimeNotFound } from '../commands/runtimes.ts';
import { listJobs } from '../infra/jobStore.ts';
import { listRuntimes, ownRuntime } from '../infra/runtimeStore.ts';
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
  /** Claims one account may hold at once in this process; more are 429. */
  maxHeldClaims: number;
}

const TAGS = ['extension'];

/** `/runtimes*` (docs/runtimes.md, ADR 0030), under `/api/v1` with ENABLE_OPEN_API; API key or OAN JWT. */
export const runtimeRoutes: FastifyPluginAsyncZod<RuntimeRouteDeps> = async (app, deps) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm' });
  const heldClaims = new HeldClaims(ctx, deps.recheckMs, deps.maxHeldClaims);

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
          'the same runtime (200); other settings are `409 RUNTIME_EXISTS`; a ninth is `429 RUNTIME_LIMIT_REACHED`.',
        body: s.runtimeBody,
        response: { 200: s.runtime, 201: s.runtime },
      },
    },
    async (req, reply) => {
      const { created, row } = await registerRuntime(
        ctx,
        principalOf(req).accountId,
        req.body.name,
        normalizePolicy(req.body.policy),
      );
      return reply.status(created ? 201 : 200).send(runtimeView(row));
    },
  );

  app.get(
    '/runtimes',
    {
      onRequest: auth,
      schema: { summary: "The account's runtimes", tags: TAGS, response: { 200: s.runtimeList } },
    },
    async (req) => (await listRuntimes(ctx.orm.em.fork(), principalOf(req).accountId)).map(runtimeView),
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
      return runtimeView(row);
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
          'the request is held until a job can be claimed or the time is up; concurrent claims never get the same job.',
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
          'Only the lease holder (`leaseOwner`, `version`) before `leaseUntil`; otherwise `409 LEASE_LOST`.',
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
          'is answered as it gave it and leaves the lease as it was; `503` means recorded, not carried out yet.',
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
        params: s.runtimeParams,
        querystring: s.jobsQuery,
        response: { 200: s.jobList },
      },
    },
    async (req) => {
      const runtime = await catchUp(ctx, principalOf(req).accountId, req.params.runtimeId);
      return (await listJobs(ctx.orm.em.fork(), runtime.id, req.query)).map(jobView);
    },
  );
};
