import { randomUUID } from 'node:crypto';
import type { AuthenticationInfo, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type {
  OwnerResolver,
  PushNotificationStore,
  ServerCallContext,
  StoredPushNotificationConfig,
} from '@a2a-js/sdk/server';
import { sql, transaction, type MikroORM } from '@oan/db';
import { refuseUrl, type UrlPolicy } from '@oan/webhooks';

/** Push configs one caller may keep on one task: each is a receiver every event of the task goes to. */
export const MAX_CONFIGS_PER_TASK = 4;

/** The caller of an SDK call: the name of its user (`key:…` or `addr:…`), never empty. */
export const callerOfUser: OwnerResolver = (context) => {
  const name = context.user?.userName;
  if (!name) throw new Error('an A2A call without its caller');
  return name;
};

export interface PushStoreOptions {
  orm: MikroORM;
  /** Where a push URL may point (libs/webhooks): https to a public address unless the QA switch is on. */
  policy: UrlPolicy;
  /** Who the call is from; by default the name of the call's user. */
  callerOf?: OwnerResolver;
  now?: () => Date;
}

/** A config as the delivery loop reads it when it sends. */
export interface PushTarget {
  url: string;
  token: string;
  authentication: AuthenticationInfo | null;
}

interface ConfigRow {
  config_id: string;
  url: string;
  token: string;
  authentication: AuthenticationInfo | null;
  wire_version: string;
}

/**
 * The push-notification configs of A2A tasks (`gofers.a2a_push_configs`), scoped by the caller: a
 * caller never reads, replaces or deletes another's, and a task it cannot see has none. A URL is
 * refused at registration by the webhook address rules; the delivery loop checks the address again
 * at every send (a name can be pointed elsewhere later).
 */
export class PgPushNotificationStore implements PushNotificationStore {
  readonly callerOf: OwnerResolver;
  private readonly opts: PushStoreOptions;
  constructor(opts: PushStoreOptions) {
    this.opts = opts;
    this.callerOf = opts.callerOf ?? callerOfUser;
  }

  /** Creates or replaces the config (by id; an empty id is given one, in place, as the SDK requires). */
  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    const callerId = this.callerOf(context);
    const authentication = checked(taskId, config, this.opts.policy);
    if (!config.id) config.id = randomUUID();
    const id = config.id;
    await transaction(this.opts.orm, async (em) => {
      // One writer per task at a time, so two creates cannot both pass the limit.
      await sql(em, `select pg_advisory_xact_lock(hashtextextended(?, 0))`, [`a2a-push:${taskId}`]);
      const [others] = await sql<{ n: number }>(
        em,
        `select count(*)::int as n from gofers.a2a_push_configs
         where task_id = ? and caller_id = ? and config_id <> ?`,
        [taskId, callerId, id],
      );
      if ((others?.n ?? 0) >= MAX_CONFIGS_PER_TASK) {
        throw new RequestMalformedError(
          `a task keeps at most ${MAX_CONFIGS_PER_TASK} push notification configs; delete one first`,
        );
      }
      await sql(
        em,
        `insert into gofers.a2a_push_configs
           (task_id, caller_id, config_id, url, token, authentication, wire_version, created_at)
         values (?, ?, ?, ?, ?, ?::jsonb, ?, ?)
         on conflict (task_id, caller_id, config_id) do update set url = excluded.url,
           token = excluded.token, authentication = excluded.authentication,
           wire_version = excluded.wire_version`,
        [
          taskId,
          callerId,
          id,
          config.url,
          config.token ?? '',
          authentication ? JSON.stringify(authentication) : null,
          context.requestedVersion,
          (this.opts.now ?? (() => new Date()))(),
        ],
      );
    });
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((s) => s.config);
  }

  async loadWithMetadata(
    taskId: string,
    context: ServerCallContext,
  ): Promise<StoredPushNotificationConfig[]> {
    return this.loadFor(taskId, this.callerOf(context));
  }

  /** The caller's configs of the task, oldest first (for events that come from no call of the caller). */
  async loadFor(taskId: string, callerId: string): Promise<StoredPushNotificationConfig[]> {
    const rows = await sql<ConfigRow>(
      this.opts.orm.em.fork(),
      `select config_id, url, token, authentication, wire_version from gofers.a2a_push_configs
       where task_id = ? and caller_id = ? order by created_at, config_id`,
      [taskId, callerId],
    );
    return rows.map((r) => ({
      config: {
        tenant: '',
        id: r.config_id,
        taskId,
        url: r.url,
        token: r.token,
        authentication: r.authentication ?? undefined,
      },
      wireVersion: r.wire_version,
    }));
  }

  /**
   * Deletes the caller's config and the notifications still waiting for it. Without an id, the one
   * whose id is the task's (the SDK's rule for requests that name none).
   */
  async delete(taskId: string, context: ServerCallContext, configId?: string): Promise<void> {
    const callerId = this.callerOf(context);
    const id = configId ?? taskId;
    await transaction(this.opts.orm, async (em) => {
      await sql(
        em,
        `delete from gofers.a2a_push_configs where task_id = ? and caller_id = ? and config_id = ?`,
        [taskId, callerId, id],
      );
      await sql(
        em,
        `delete from gofers.a2a_push_deliveries
         where task_id = ? and caller_id = ? and config_id = ? and state = 'pending'`,
        [taskId, callerId, id],
      );
    });
  }

  /** Where and how a queued notification goes, or null when its config was deleted meanwhile. */
  async target(taskId: string, callerId: string, configId: string): Promise<PushTarget | null> {
    const [row] = await sql<ConfigRow>(
      this.opts.orm.em.fork(),
      `select url, token, authentication from gofers.a2a_push_configs
       where task_id = ? and caller_id = ? and config_id = ?`,
      [taskId, callerId, configId],
    );
    return row ? { url: row.url, token: row.token, authentication: row.authentication } : null;
  }
}

/** An HTTP authentication scheme (RFC 9110 token) and text that may stand in a header. */
const SCHEME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
const HEADER_TEXT = /^[\x20-\x7e]*$/;

/** The config's authentication, or none; throws the SDK's invalid-params error for what cannot be kept. */
function checked(
  taskId: string,
  config: TaskPushNotificationConfig,
  policy: UrlPolicy,
): AuthenticationInfo | null {
  const refuse = (why: string) => new RequestMalformedError(`push notification config: ${why}`);
  if (!taskId) throw refuse('taskId is required');
  if (typeof config.url !== 'string' || config.url.length > 2048)
    throw refuse('url is required (at most 2048 characters)');
  const refused = refuseUrl(config.url, policy);
  if (refused) throw refuse(refused);
  if (config.id && (config.id.length > 128 || !HEADER_TEXT.test(config.id))) {
    throw refuse('id must be at most 128 printable characters');
  }
  const token = config.token ?? '';
  if (token.length > 1024 || !HEADER_TEXT.test(token))
    throw refuse('token must be at most 1024 printable characters');
  const auth = config.authentication;
  if (!auth || (!auth.scheme && !auth.credentials)) return null;
  if (!SCHEME.test(auth.scheme ?? ''))
    throw refuse('authentication.scheme must be an HTTP authentication scheme');
  const credentials = auth.credentials ?? '';
  if (!credentials || credentials.length > 4096 || !HEADER_TEXT.test(credentials)) {
    throw refuse('authentication.credentials must be 1 to 4096 printable characters');
  }
  return { scheme: auth.scheme, credentials };
}
