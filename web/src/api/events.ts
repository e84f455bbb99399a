/**
 * The event envelope and the unresolved digest (`GET /events/unresolved`). The gateway's routes carry no
 * response schema in docs/openapi.json, so these two are written from the reference here;
 * test/web/types.unit.test.ts proves they agree with @oan/protocol's OanEventEnvelope both ways.
 */
export type EventType =
  | 'gofer_message'
  | 'gofer_question'
  | 'session_summary'
  | 'pair_proposed'
  | 'match_request'
  | 'match_decided'
  | 'relay_message'
  | 'system_notice';

export interface Envelope {
  v: 1;
  seq: string;
  eventId: string;
  type: EventType;
  goferId?: string | undefined;
  chatId?: string | undefined;
  threadId?: string | undefined;
  conversationId?: string | undefined;
  source: 'platform' | 'own_gofer' | 'counterpart_gofer' | 'counterpart_party';
  responseConstraints?: unknown;
  reply?: { method: 'POST'; path: string } | undefined;
  webUrl?: string | undefined;
  payload: Record<string, unknown>;
  createdAt: string;
}

export interface Unresolved {
  events: Envelope[];
  summary: { pendingQuestions: number; goferCount: number; decisions: number };
}
