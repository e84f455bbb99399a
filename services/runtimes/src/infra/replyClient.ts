import { internalCommandHeaders, signOanJwt } from '@oan/auth';
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
}

export interface ReplyClientOptions {
  urls: Partial<Record<ReplyService, string>>;
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
  return {
    serves: (service) => opts.urls[service] !== undefined,
    async send(call, accountId, commandId) {
      const base = opts.urls[call.service];
      if (base === undefined) throw new Error(`no URL for ${call.service}`);
      const token = await signOanJwt(opts.jwtSecret, { accountId, ttlSeconds: 60 });
      const res = await fetch(`${base}${OAN_BASE_PATH}${call.path}`, {
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
  };
}
