import type { StreamResponse, Task } from '@a2a-js/sdk';
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationSerializer,
  type ServerCallContext,
} from '@a2a-js/sdk/server';
import type { MikroORM } from '@oan/db';
import { enqueue, type QueuedRow } from './queue.ts';
import type { PgPushNotificationStore } from './store.ts';

export interface QueuedPushSenderOptions {
  orm: MikroORM;
  store: PgPushNotificationStore;
  /**
   * Serializers by the wire version a config was registered over; any other version gets the v1.0
   * one (`application/a2a+json`), as the SDK's own sender does.
   */
  serializers?: Partial<Record<string, PushNotificationSerializer>>;
  /** Told after notifications were queued: this process's delivery loop, so they go at once. */
  onQueued?: () => void;
  now?: () => Date;
}

/** The task an event belongs to, or '' for a message outside any task (no config can name it). */
function taskIdOf(response: StreamResponse): string {
  const payload = response.payload;
  switch (payload?.$case) {
    case 'task':
      return payload.value.id;
    case 'statusUpdate':
    case 'artifactUpdate':
    case 'message':
      return payload.value.taskId;
    case undefined:
      return '';
    default: {
      const never: never = payload;
      return never;
    }
  }
}

/**
 * The SDK's push sender, made durable: `send` serializes the event once per wire version and queues
 * one row per config of the task (`gofers.a2a_push_deliveries`), then returns; the delivery loop
 * (./delivery.ts) POSTs them, retries and keeps their order. The request handler does not wait for a
 * send, so this process chains the sends of one task: its rows are queued in the order of its events.
 */
export class QueuedPushSender implements PushNotificationSender {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly fallback = new V1PushNotificationSerializer();

  private readonly opts: QueuedPushSenderOptions;
  constructor(opts: QueuedPushSenderOptions) {
    this.opts = opts;
  }

  /** Never throws synchronously: the handler only catches a rejected promise. */
  async send(streamResponse: StreamResponse, context: ServerCallContext, task?: Task): Promise<void> {
    if (!taskIdOf(streamResponse)) return;
    await this.sendFor(this.opts.store.callerOf(context), streamResponse, task);
  }

  /**
   * Queues an event of a task for its caller's configs, for events that come from no call of the
   * caller (an owner's answer that resumes the task).
   */
  sendFor(callerId: string, streamResponse: StreamResponse, task?: Task): Promise<void> {
    const taskId = taskIdOf(streamResponse);
    if (!taskId) return Promise.resolve();
    const previous = this.chains.get(taskId) ?? Promise.resolve();
    const next = previous
      .catch(() => undefined)
      .then(() => this.queue(taskId, callerId, streamResponse, task));
    this.chains.set(taskId, next);
    return next.finally(() => {
      if (this.chains.get(taskId) === next) this.chains.delete(taskId);
    });
  }

  private async queue(taskId: string, callerId: string, response: StreamResponse, task?: Task) {
    const configs = await this.opts.store.loadFor(taskId, callerId);
    if (configs.length === 0) return;
    const bodies = new Map<string, { body: string; contentType: string }>();
    const rows: QueuedRow[] = configs.map(({ config, wireVersion }) => {
      let serialized = bodies.get(wireVersion);
      if (!serialized) {
        const serializer = this.opts.serializers?.[wireVersion] ?? this.fallback;
        serialized = serializer.serialize(response, task);
        bodies.set(wireVersion, serialized);
      }
      return { configId: config.id, body: serialized.body, contentType: serialized.contentType };
    });
    const now = (this.opts.now ?? (() => new Date()))();
    await enqueue(this.opts.orm.em.fork(), taskId, callerId, rows, now);
    this.opts.onQueued?.();
  }
}
