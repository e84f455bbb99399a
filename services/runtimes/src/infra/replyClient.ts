import { internalCommandHeaders, signOanJwt } from '@oan/auth';
import { Replicas } from '@oan/http';
import { OAN_BASE_PATH } from '@oan/protocol';
import type { ReplyCall, ReplyService } from '../domain/reply.ts';

/** The owning service's answer: its status and its body as it sent it. */
export interface ReplyAnswer {
  status: number;
  text: string;
}

/** Sends a reply call for an account under a command id; throws when the service cannot be reached. */
export interface ReplyClient {
  /** Whether the service that owns `service`'s replies is configured. */
  serves(service: ReplyService): boolean;
  send(call: ReplyCall, accountId: string, commandId: string): Promise<ReplyAnswer>;
  close(): Promise<void>;
}

export interface ReplyClientOptions {
  /** Each owning service's replicas (several URLs: spread, retried on another only when refused). */
  urls: Partial<Record<ReplyService, readonly string[]>>;
  jwtSecret: string;
  timeoutMs: number;
  /**
   * Fault injection for the crash tests (RUNTIMES_FAULT=exit-after-reply, refused in production):
   * the process kills itself with SIGKILL right after a reply was carried out, before it is recorded.
   */
  exitAfterReply?: boolean;
}

/**
 * Calls the owning service's own reply route directly (not through the edge), acting for the
 * account with a short-lived OAN token, and as the fleet (the internal secret) so that it may name
 * the command id the service runs the reply once under.
 */
export function replyClient(opts: ReplyClientOptions): ReplyClient {
  const services = new Map<ReplyService, Replicas>();
  for (const [service, urls] of Object.entries(opts.urls) as [ReplyService, readonly string[] | undefined][])
    if (urls) services.set(service, new Replicas(urls));
  return {
    serves: (service) => services.has(service),
    async send(call, accountId, commandId) {
      const replicas = services.get(call.service);
      if (replicas === undefined) throw new Error(`no URL for ${call.service}`);
      const token = await signOanJwt(opts.jwtSecret, { accountId, ttlSeconds: 60 });
      const res = await replicas.fetch(`${OAN_BASE_PATH}${call.path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${token}`,
          ...internalCommandHeaders(opts.jwtSecret, commandId),
        },
        body: JSON.stringify(call.body),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      const text = await res.text();
      if (opts.exitAfterReply && res.ok) process.kill(process.pid, 'SIGKILL');
      return { status: res.status, text };
    },
    async close() {
      await Promise.all([...services.values()].map((r) => r.close()));
    },
  };
}
