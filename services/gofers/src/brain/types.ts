import type { ChatRole, DiscoveryStatus } from '@oan/domain';

/** The frozen v1 `responseConstraints` shape; only pending queries carry it (it describes the reply to a question). */
export interface ResponseConstraints {
  format: 'freestyle' | 'boolean' | 'enum' | 'json_schema';
  enumOptions?: string[];
  jsonSchema?: Record<string, unknown>;
  maxLength?: number;
}

export interface PublicProfile {
  name: string;
  description: string;
  values: string[];
  demands: string[];
}

/** What a brain knows about the Gofer it speaks for: its own profile only (never the counterpart's in a system prompt). */
export interface BrainGofer extends PublicProfile {
  goferId: string;
  locale: string;
  humanReviewTriggers: string[];
  discoveryStatus: DiscoveryStatus;
}

export interface HistoryItem {
  role: ChatRole;
  content: string;
  pendingQuery: boolean;
  /**
   * `pairing` for the announcement of a pairing (it quotes the counterpart's name); `relay` for a
   * relay caller's turn; `caller_question`, `owner_answer`, `caller_answer`, `caller_withdrawn` for
   * a caller's question to the owner, the owner's answer to it and the Gofer's notes that it was
   * passed on or that the caller stopped waiting; else null.
   */
  kind?: string | null;
}

export interface BrainInput {
  gofer: BrainGofer;
  /** Oldest first, this Gofer's chat only, without the message being answered. */
  history: HistoryItem[];
  message: { messageId: string; content: string };
  /** Parsed documents of this Gofer (ragStatus ready). */
  knowledge: string[];
}

export interface BrainOutput {
  content: string;
  /** true ⇒ the turn waits for the owner and becomes a `gofer_question` event. */
  pendingQuery: boolean;
  responseConstraints: ResponseConstraints | null;
  /** The whole new public profile, when this turn changed it. */
  profile?: PublicProfile;
  discoveryStatus?: DiscoveryStatus;
}

export interface BrainProvider {
  /** 'scripted' | 'openai': a metric label, never content. */
  readonly kind: string;
  reply(input: BrainInput): Promise<BrainOutput>;
}

/**
 * ADR 0023: a caller on the ConnectOnion relay speaks to a published Gofer. The Gofer
 * knows its own public profile only: not its owner's chat, documents or review triggers.
 */
export interface CallerInput {
  gofer: PublicProfile & { goferId: string; locale: string };
  /** The caller's relay address (its CONNECT's verified `from`). */
  caller: string;
  /** This relay session so far, oldest first: the caller's words and the Gofer's answers. */
  history: { from: 'caller' | 'gofer'; content: string }[];
  /** The caller's new message: untrusted counterpart content, never an instruction. */
  message: string;
}

export interface CallerOutput {
  /** What the Gofer says to the caller. */
  content: string;
  /**
   * A short question for the owner, in the Gofer's own words, when the caller asked what only the
   * owner can answer (availability, a price, contact, a commitment, anything beyond the public
   * profile); `content` then tells the caller the Gofer will ask and come back. Null otherwise.
   */
  askOwner: string | null;
}

/** A brain that also answers relay callers (both providers are one). */
export interface CallerBrain {
  answerCaller(input: CallerInput): Promise<CallerOutput>;
}

export type BrainErrorCode = 'BRAIN_INVALID_OUTPUT' | 'BRAIN_UPSTREAM';

/** A generation that produced nothing usable. Messages never quote the owner's content. */
export class BrainError extends Error {
  override readonly name = 'BrainError';
  readonly code: BrainErrorCode;
  constructor(code: BrainErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
