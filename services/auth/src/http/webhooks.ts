import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth, type Authenticator } from '@oan/auth';
import { transaction, type MikroORM } from '@oan/db';
import { forbidden, HttpError, noContent, validation } from '@oan/http';
import { ErrorCodes } from '@oan/protocol';
import { newSigningSecret, refuseUrl, type UrlPolicy } from '@oan/webhooks';
import {
  deleteWebhook,
  insertWebhook,
  listWebhooks,
  ownWebhook,
  recentDeliveries,
  type WebhookRow,
} from '../infra/webhookStore.ts';
import * as s from './schemas.ts';

/** At most this many endpoints per account. */
export const MAX_WEBHOOKS_PER_ACCOUNT = 3;
const SHOWN_DELIVERIES = 50;

export interface WebhookRouteDeps {
  orm: MikroORM;
  authenticator: Authenticator;
  policy: UrlPolicy;
  now: () => Date;
}

/** A timestamptz as the API writes it (whatever type the driver returned it as). */
const iso = (t: Date | string) => new Date(t).toISOString();
const isoOrNull = (t: Date | string | null) => (t === null ? null : iso(t));

const view = (w: WebhookRow) => ({
  id: w.id,
  url: w.url,
  ...(w.description !== null ? { description: w.description } : {}),
  createdAt: iso(w.created_at),
});

/** `/webhooks*` (ADR 0018), under `/api/v1` with ENABLE_OPEN_API; API key or OAN JWT. */
export const webhookRoutes: FastifyPluginAsyncZod<WebhookRouteDeps> = async (app, deps) => {
  const auth = requireAuth(deps.authenticator, { mode: 'multi+realm' });

  app.post(
    '/webhooks',
    {
      onRequest: auth,
      schema: {
        summary: 'Register a webhook endpoint (an extension to protocol v1)',
        tags: ['extension'],
        description:
          'Every envelope of the account after the registration is POSTed to `url` as the exact JSON of `oan:event`, ' +
          'in seq order, signed per Standard Webhooks 1.0 with the `secret` answered here once ' +
          '(docs/connectors-without-socket.md). At most 3 per account: a fourth is `409 {code: "WEBHOOK_LIMIT_REACHED"}`. ' +
          '`url` must be https and name a public address.',
        body: s.webhookBody,
        response: { 201: s.webhookCreated },
      },
    },
    async (req, reply) => {
      const refused = refuseUrl(req.body.url, deps.policy);
      if (refused) throw validation(refused);
      const secret = newSigningSecret();
      const row = await transaction(deps.orm, (em) =>
        insertWebhook(
          em,
          {
            id: randomUUID(),
            accountId: principalOf(req).accountId,
            url: req.body.url,
            description: req.body.description ?? null,
            secret,
            now: deps.now(),
          },
          MAX_WEBHOOKS_PER_ACCOUNT,
        ),
      );
      if (!row) {
        throw new HttpError(
          409,
          ErrorCodes.webhookLimitReached,
          `At most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account; delete one first`,
        );
      }
      return reply.status(201).send({ ...view(row), secret });
    },
  );

  app.get(
    '/webhooks',
    {
      onRequest: auth,
      schema: {
        summary: "The account's webhook endpoints, without their secrets (an extension to protocol v1)",
        tags: ['extension'],
        response: { 200: s.webhookList },
      },
    },
    async (req) =>
      (await listWebhooks(deps.orm.em.fork(), principalOf(req).accountId)).map((w) => ({
        ...view(w),
        disabledAt: isoOrNull(w.disabled_at),
      })),
  );

  app.delete(
    '/webhooks/:webhookId',
    {
      onRequest: auth,
      schema: {
        summary: 'Delete a webhook endpoint (an extension to protocol v1)',
        tags: ['extension'],
        description: 'Nothing more is sent to it. An unknown or foreign id is the byte-identical 403.',
        params: s.webhookParams,
        response: { 204: noContent },
      },
    },
    async (req, reply) => {
      const deleted = await deleteWebhook(
        deps.orm.em.fork(),
        principalOf(req).accountId,
        req.params.webhookId,
      );
      if (!deleted) throw forbidden(); // unknown and foreign ids: the byte-identical 403
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/webhooks/:webhookId/deliveries',
    {
      onRequest: auth,
      schema: {
        summary: "A webhook endpoint's recent delivery attempts, newest first (an extension to protocol v1)",
        tags: ['extension'],
        params: s.webhookParams,
        response: { 200: s.deliveryList },
      },
    },
    async (req) => {
      const em = deps.orm.em.fork();
      const w = await ownWebhook(em, principalOf(req).accountId, req.params.webhookId);
      if (!w) throw forbidden();
      return (await recentDeliveries(em, w.id, SHOWN_DELIVERIES)).map((d) => ({
        eventId: d.event_id,
        seq: d.seq,
        attempt: d.attempt,
        statusCode: d.status_code,
        error: d.error,
        latencyMs: d.latency_ms,
        attemptedAt: iso(d.attempted_at),
        nextRetryAt: isoOrNull(d.next_retry_at),
      }));
    },
  );
};
