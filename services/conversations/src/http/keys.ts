import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { principalOf, requireAuth } from '@oan/auth';
import { noContent } from '@oan/http';
import { assertParticipates } from '../commands/context.ts';
import { publishKey, retireKey } from '../commands/keys.ts';
import { currentKeysOf } from '../infra/deviceKeys.ts';
import { rethrowMapped } from './errors.ts';
import type { ConversationRouteDeps } from './messages.ts';
import * as s from './schemas.ts';

const TAGS = ['extension'];
const SEE = 'Extension to protocol v1 (docs/sealed-messages.md). ';

/**
 * The key directory under `/api/v1`: a caller's device keys, and both sides' keys of a conversation.
 * Every read is of the write side, in the state a sealed send is checked against, so a client that
 * reads the keys after a 409 seals for what the next send is checked with.
 */
export const keyRoutes: FastifyPluginAsyncZod<Pick<ConversationRouteDeps, 'ctx' | 'authenticator'>> = async (
  app,
  deps,
) => {
  app.setErrorHandler(rethrowMapped);
  const { ctx } = deps;
  const auth = (permission: 'message:send' | 'message:read') =>
    requireAuth(deps.authenticator, { mode: 'multi+realm', permission });

  app.put(
    '/keys/:keyId',
    {
      onRequest: auth('message:send'),
      schema: {
        tags: TAGS,
        summary: 'Publish a device key (extension to protocol v1)',
        description:
          SEE +
          '201 with the key when new, 200 when this keyId already holds this key (a retry). ' +
          '409 KEY_ID_IN_USE: the keyId holds another key or was retired, or the key is under another keyId; ' +
          '409 TOO_MANY_KEYS: the account has 8 current keys.',
        params: s.keyParams,
        body: s.publishKeyBody,
        response: { 200: s.deviceKey, 201: s.deviceKey },
      },
    },
    async (req, reply) => {
      const accountId = principalOf(req).accountId;
      const { keyId } = req.params;
      const { created, key } = await publishKey(ctx, { accountId, keyId, publicKey: req.body.publicKey });
      const { keyId: id, publicKey, fingerprint, publishedAt } = key;
      return reply.status(created ? 201 : 200).send({ keyId: id, publicKey, fingerprint, publishedAt });
    },
  );

  app.delete(
    '/keys/:keyId',
    {
      onRequest: auth('message:send'),
      schema: {
        tags: TAGS,
        summary: 'Retire a device key (extension to protocol v1)',
        description: `${SEE}Retired for good (204, again 204); a keyId the caller never published is 404 KEY_NOT_FOUND.`,
        params: s.keyParams,
        response: { 204: noContent },
      },
    },
    async (req, reply) => {
      await retireKey(ctx, { accountId: principalOf(req).accountId, keyId: req.params.keyId });
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/keys',
    {
      onRequest: auth('message:read'),
      schema: {
        tags: TAGS,
        summary: "The caller's current device keys (extension to protocol v1)",
        description: `${SEE}Oldest first.`,
        response: { 200: s.keysResponse },
      },
    },
    async (req) => {
      const rows = await currentKeysOf(ctx.orm.em.fork(), [principalOf(req).accountId]);
      return { keys: rows.map(({ accountId: _a, ...key }) => key) };
    },
  );

  app.get(
    '/conversations/:conversationId/keys',
    {
      onRequest: auth('message:read'),
      schema: {
        tags: TAGS,
        summary: "Both sides' current device keys (extension to protocol v1)",
        description: `${SEE}What a sealed message to this conversation is checked against, oldest first.`,
        params: s.conversationParams,
        response: { 200: s.conversationKeysResponse },
      },
    },
    async (req) => {
      const conv = await assertParticipates(ctx, req.params.conversationId, principalOf(req).accountId);
      return { keys: await currentKeysOf(ctx.orm.em.fork(), [conv.accountA, conv.accountB]) };
    },
  );
};
