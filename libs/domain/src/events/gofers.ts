/**
 * The gofers context's domain events (schemas/gofers/<Type>.v1.avsc). One stream per Gofer,
 * `gofer-<goferId>`, keyed by the owner's accountId. Nullable fields are always present (null).
 * JSON-valued fields (`pairing`, `responseConstraints`) travel as JSON text.
 */
import type { AttachmentKind } from './common.ts';
export type ChatRole = 'user' | 'assistant' | 'system';
export type DiscoveryStatus = 'in_discovery' | 'ready_for_pairing';
export type RagStatus = 'processing' | 'ready' | 'failed' | 'unsupported';

export interface GoferCreated {
  goferId: string;
  accountId: string;
  chatId: string;
  locale: string;
  name: string;
  description: string;
  sourcePlatform: string;
  humanReviewTriggers: string[];
  createdAt: string;
}

export interface ChatMessageAdded {
  goferId: string;
  accountId: string;
  chatId: string;
  messageId: string;
  role: ChatRole;
  content: string;
  /** At most one on the Gofer face; ids of AttachmentAdded of this Gofer. */
  attachmentIds: string[];
  /**
   * 'pairing' on the system rows that announce a pairing; 'relay' (or 'a2a') on the assistant
   * rows that report a turn of a relay (or A2A) caller (the row quotes the caller's untrusted text);
   * 'caller_question' on the pending assistant rows that ask the owner for a caller, and
   * 'caller_answer' on the assistant rows that say the owner's answer was passed on, and
   * 'caller_withdrawn' on those that say the caller stopped waiting (ADR 0036).
   */
  kind: string | null;
  /** JSON text of `{threadId, self:{roleId,name}, counterpart:{roleId,name}}` on pairing rows. */
  pairing: string | null;
  /** An assistant turn that waits for the owner (becomes `gofer_question`). */
  pendingQuery: boolean;
  /** JSON text of the frozen `responseConstraints` shape, on pending queries only. */
  responseConstraints: string | null;
  /** The user message an assistant turn answers (the brain replies once per user message). */
  replyTo: string | null;
  createdAt: string;
}

export interface GoferProfileUpdated {
  goferId: string;
  accountId: string;
  name: string;
  description: string;
  values: string[];
  demands: string[];
  updatedAt: string;
}

export interface GoferDiscoveryStatusChanged {
  goferId: string;
  accountId: string;
  status: DiscoveryStatus;
  changedAt: string;
}

export interface GoferDeleted {
  goferId: string;
  accountId: string;
  deletedAt: string;
}

export interface AttachmentAdded {
  goferId: string;
  accountId: string;
  attachmentId: string;
  kind: AttachmentKind;
  name: string;
  mimeType: string;
  size: number;
  width: number | null;
  height: number | null;
  /** Where the bytes are in object storage; never exposed on the wire. */
  storageKey: string;
  ragStatus: RagStatus;
  createdAt: string;
}

export interface AttachmentRagStatusChanged {
  goferId: string;
  accountId: string;
  attachmentId: string;
  ragStatus: RagStatus;
  /** The parsed text of a document (text/plain, text/csv), bounded; null unless `ready`. */
  knowledge: string | null;
  changedAt: string;
}

/** The owner published the Gofer on the ConnectOnion agent relay (ADR 0023); no key in it. */
export interface GoferRelayPublished {
  goferId: string;
  accountId: string;
  /** `0x` + the hex of the raw Ed25519 public key (the relay's agent address). */
  address: string;
  publishedAt: string;
}

/** The owner took the Gofer off the relay (ADR 0023). */
export interface GoferRelayUnpublished {
  goferId: string;
  accountId: string;
  address: string;
  unpublishedAt: string;
}

/**
 * A caller (on the agent relay or over A2A) asked what only the owner can answer (ADR 0036). The
 * role-chat row `messageId` (kind `caller_question`, a pending query) asks the owner; it is written
 * with this event, or, while another caller question of the Gofer is open, when that one is
 * answered (one at a time). `content` is that row's text.
 */
export interface CallerQuestionAsked {
  goferId: string;
  accountId: string;
  messageId: string;
  /** `a2a` | `relay`: where the caller waits. */
  channel: string;
  /** The caller's id on that channel (a relay address, an A2A caller identity). */
  caller: string;
  /** What the caller's side waits on (an A2A task id, a relay session). */
  taskId: string;
  content: string;
  askedAt: string;
}

/**
 * The owner's next message after the question row answered it, and the answer was handed to the
 * caller's channel (`delivered`), or the caller was gone (ADR 0036). Once per question.
 */
export interface CallerQuestionAnswered {
  goferId: string;
  accountId: string;
  questionMessageId: string;
  /** The owner's `user` message that answered. */
  answerMessageId: string;
  channel: string;
  caller: string;
  taskId: string;
  delivered: boolean;
  answeredAt: string;
}

/**
 * The caller stopped waiting before the owner answered (an A2A task canceled): the question leaves
 * the queue, and the next one is asked (ADR 0036).
 */
export interface CallerQuestionWithdrawn {
  goferId: string;
  accountId: string;
  questionMessageId: string;
  taskId: string;
  withdrawnAt: string;
}

/** The owner made the Gofer reachable as an A2A agent (ADR 0035): its agent card is served. */
export interface GoferA2APublished {
  goferId: string;
  accountId: string;
  publishedAt: string;
}

/** The owner took the Gofer off A2A (ADR 0035): its card 404s, its open tasks end canceled. */
export interface GoferA2AUnpublished {
  goferId: string;
  accountId: string;
  unpublishedAt: string;
}

export type GoferEvent =
  | { type: 'GoferCreated'; data: GoferCreated }
  | { type: 'ChatMessageAdded'; data: ChatMessageAdded }
  | { type: 'GoferProfileUpdated'; data: GoferProfileUpdated }
  | { type: 'GoferDiscoveryStatusChanged'; data: GoferDiscoveryStatusChanged }
  | { type: 'GoferDeleted'; data: GoferDeleted }
  | { type: 'AttachmentAdded'; data: AttachmentAdded }
  | { type: 'AttachmentRagStatusChanged'; data: AttachmentRagStatusChanged }
  | { type: 'GoferRelayPublished'; data: GoferRelayPublished }
  | { type: 'GoferRelayUnpublished'; data: GoferRelayUnpublished }
  | { type: 'CallerQuestionAsked'; data: CallerQuestionAsked }
  | { type: 'CallerQuestionAnswered'; data: CallerQuestionAnswered }
  | { type: 'CallerQuestionWithdrawn'; data: CallerQuestionWithdrawn }
  | { type: 'GoferA2APublished'; data: GoferA2APublished }
  | { type: 'GoferA2AUnpublished'; data: GoferA2AUnpublished };

export const goferStreamId = (goferId: string) => `gofer-${goferId}`;
