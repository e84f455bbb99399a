import type { PublicProfile } from '../domain/discovery.ts';
import type { SessionCardFields } from '../domain/summaryCard.ts';

/**
 * The Gofer-to-Gofer session behind a provider interface: `scripted` (the default,
 * deterministic and offline) or `openai` (any OpenAI-compatible endpoint). Each call speaks for ONE
 * side, with its own profile, the counterpart's PUBLIC fields only and the transcript so far.
 */

/** The speaking side: its Gofer and its own profile (it may use all of it). */
export interface SessionSelf {
  goferId: string;
  profile: PublicProfile;
}

/** What the counterpart shares with everyone: its public profile fields, nothing else. */
export type CounterpartProfile = Pick<PublicProfile, 'name' | 'description' | 'values' | 'demands'>;

/** One turn of the transcript, from the speaking side's point of view. */
export interface SessionTranscriptTurn {
  turnIndex: number;
  speaker: 'self' | 'counterpart';
  content: string;
}

export interface NextTurnInput {
  self: SessionSelf;
  counterpart: CounterpartProfile;
  /** The turns so far, in order; the new turn is `transcript.length`. */
  transcript: readonly SessionTranscriptTurn[];
  /** The index of the turn to say (= transcript.length) and the session's length. */
  turnIndex: number;
  totalTurns: number;
  /** Whether `self` opened the session (it speaks the even turns). */
  opens: boolean;
}

export interface SummaryCardInput {
  self: SessionSelf;
  counterpart: CounterpartProfile;
  transcript: readonly SessionTranscriptTurn[];
}

/** A summary card's content fields, as the scripted session has always produced them. */
export type CardFields = SessionCardFields;

export interface SessionProvider {
  readonly kind: 'scripted' | 'openai';
  /**
   * Whether the same input always yields the same output. A non-deterministic provider's card is
   * generated once per side: regenerating it on a redelivery would append a new version each time.
   */
  readonly deterministic: boolean;
  nextTurn(input: NextTurnInput): Promise<{ content: string }>;
  summaryCard(input: SummaryCardInput): Promise<CardFields>;
}

export type SessionErrorCode = 'SESSION_UPSTREAM' | 'SESSION_INVALID_OUTPUT';

/** A provider that could not produce a usable turn or card (its message never holds profile text). */
export class SessionProviderError extends Error {
  override readonly name = 'SessionProviderError';
  readonly code: SessionErrorCode;
  constructor(code: SessionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
