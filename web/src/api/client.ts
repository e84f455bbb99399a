import createClient, { type Middleware } from 'openapi-fetch';
import { loadSession, saveSession } from '../session';
import type { components, paths } from './openapi';

export type { Envelope, Unresolved } from './events';

/** Typed calls to the fleet's own /api/v1 (docs/openapi.json), with the session's JWT as Bearer. */
export const api = createClient<paths>({ baseUrl: location.origin });

const auth: Middleware = {
  onRequest({ request }) {
    const s = loadSession();
    if (s) request.headers.set('authorization', `Bearer ${s.token}`);
    return request;
  },
  onResponse({ response }) {
    // An expired or revoked JWT: back to the sign-in form (the page the operator was on stays).
    if (response.status === 401 && loadSession()) saveSession(null);
    return response;
  },
};
api.use(auth);

export type Schemas = components['schemas'];
type Json<P extends keyof paths, M extends 'get' | 'post', S extends number> = paths[P][M] extends {
  responses: infer R;
}
  ? S extends keyof R
    ? R[S] extends { content: { 'application/json': infer T } }
      ? T
      : never
    : never
  : never;

export type Gofer = Json<'/api/v1/gofers', 'get', 200>[number];
export type ChatMessage = Json<'/api/v1/gofers/{goferId}/chat/messages', 'get', 200>[number];
export type PairingCard = Json<'/api/v1/gofers/{goferId}/pairings', 'get', 200>['items'][number];
export type Thread = Json<'/api/v1/threads/{id}', 'get', 200>;
export type ConversationMessage = Json<'/api/v1/conversations/{conversationId}/messages', 'get', 200>[number];
export type ApiKey = Json<'/api/v1/api-keys', 'get', 200>[number];
export type Runtime = Json<'/api/v1/runtimes', 'get', 200>[number];
export type RuntimeJob = Json<'/api/v1/runtimes/{runtimeId}/jobs', 'get', 200>[number];
export type RuntimeWaitingJob = Json<'/api/v1/runtimes/waiting', 'get', 200>[number];

/** A refused call: the server's `error` text as the message, its `code` and the HTTP status beside it. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  constructor(message: string, status: number, code: string | undefined) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The `{error, code}` body of a refused call as an ApiError whose message is the server's text. */
export function need<T>(res: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (res.response.ok && res.data !== undefined) return res.data;
  if (res.response.ok) return undefined as T;
  const err = res.error as { error?: unknown; code?: unknown } | undefined;
  const text = typeof err?.error === 'string' ? err.error : `${what}: HTTP ${res.response.status}`;
  throw new ApiError(text, res.response.status, typeof err?.code === 'string' ? err.code : undefined);
}
