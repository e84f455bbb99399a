/**
 * A `handled` finish with a `reply`: the server carries out the answer through the owning service's
 * own reply route, the one the envelope's `reply` names, routed by the envelope's ids (as connectors
 * route, never by `reply.path`). Pure: the store records the call, the client sends it.
 */

/** The services that own the reply routes. */
export type ReplyService = 'gofers' | 'matching' | 'conversations';

/** One POST to an owning service, with the permission an API key needs to send it itself. */
export interface ReplyCall {
  service: ReplyService;
  path: string;
  body: Record<string, unknown>;
  permission: 'message:send' | 'pair:confirm';
}

/** What a job's envelope says about where its reply goes. */
export interface EnvelopeIds {
  type: string;
  goferId?: string | undefined;
  threadId?: string | undefined;
  conversationId?: string | undefined;
  payload?: { requestId?: unknown; conversationId?: unknown } | undefined;
}

/** Why a reply cannot be carried out as given (a 400: nothing is recorded). */
export class InvalidReply extends Error {
  override readonly name = 'InvalidReply';
}

const enc = encodeURIComponent;
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** The reply body may carry exactly these keys (the route's own body, minus what the envelope fixes). */
function only(reply: Record<string, unknown>, keys: readonly string[], required: readonly string[]) {
  const extra = Object.keys(reply).filter((k) => !keys.includes(k));
  if (extra.length > 0) throw new InvalidReply(`reply: unexpected field ${extra.join(', ')}`);
  const missing = required.filter((k) => reply[k] === undefined);
  if (missing.length > 0) throw new InvalidReply(`reply: ${missing.join(', ')} is required`);
  const body: Record<string, unknown> = {};
  for (const k of keys) if (reply[k] !== undefined) body[k] = reply[k];
  return body;
}

function need(value: string | undefined, what: string): string {
  // every envelope type that carries a reply names these ids; a missing one is a stored defect
  if (value === undefined) throw new Error(`the envelope has no ${what}`);
  return value;
}

/**
 * The call that carries out `reply` for the envelope: the chat message for `gofer_message` and
 * `gofer_question`, pair/confirm as the envelope's Gofer for `pair_proposed`, the decision for
 * `match_request`, the conversation message for `relay_message`. The owning service checks the
 * values (content rules, attachments); here only the fields are.
 */
export function replyCall(env: EnvelopeIds, reply: Record<string, unknown>): ReplyCall {
  switch (env.type) {
    case 'gofer_message':
    case 'gofer_question':
      return {
        service: 'gofers',
        path: `/gofers/${enc(need(env.goferId, 'goferId'))}/chat/messages`,
        body: only(reply, ['content', 'attachmentIds'], []),
        permission: 'message:send',
      };
    case 'pair_proposed': {
      const goferId = need(env.goferId, 'goferId');
      return {
        service: 'matching',
        path: `/threads/${enc(need(env.threadId, 'threadId'))}/pair/confirm`,
        body: { roleId: goferId, ...only(reply, ['accepted'], ['accepted']) },
        permission: 'pair:confirm',
      };
    }
    case 'match_request':
      return {
        service: 'matching',
        path: `/match-requests/${enc(need(str(env.payload?.requestId), 'payload.requestId'))}/decision`,
        body: only(reply, ['accept'], ['accept']),
        permission: 'pair:confirm',
      };
    case 'relay_message': {
      const conversationId = str(env.conversationId) ?? str(env.payload?.conversationId);
      return {
        service: 'conversations',
        path: `/conversations/${enc(need(conversationId, 'conversationId'))}/messages`,
        body: only(reply, ['content', 'attachmentIds'], []),
        permission: 'message:send',
      };
    }
    default:
      throw new InvalidReply(`an event of type ${env.type} has no reply`);
  }
}

/** The command id of a lease's reply: the owning service carries it out once however often it is sent. */
export const replyCommandId = (jobId: string, version: number) => `runtimes/${jobId}/${version}`;

/** How the owning service's answer ends a pending reply. */
export type ReplyVerdict = 'done' | 'refused' | 'retry';

/**
 * 2xx: carried out. 408, 429 and 5xx: not known yet (the same command id is sent again). Any other
 * 4xx: the owning service refused it (a thread no longer awaiting confirmation): nothing was written
 * there, and the pending reply is dropped.
 */
export function verdictOf(status: number): ReplyVerdict {
  if (status >= 200 && status < 300) return 'done';
  if (status === 408 || status === 429 || status >= 500) return 'retry';
  return status >= 400 ? 'refused' : 'retry';
}
