/** An event a decider returns; the store stamps stream, version and position on append. */
export interface NewEvent<T = unknown> {
  type: string;
  /**
   * Avro schema version of `data` (schemas/<context>/<type>.v<N>.avsc). Default: the latest version
   * the store's validator knows (`EventValidator.latestVersion`), else 1.
   */
  version?: number;
  data: T;
  /**
   * The Kafka key of the event's record: events with one key keep their order on one partition.
   * Each context keys by the account whose order matters (a Gofer's owner, a thread's side a, a
   * conversation's actor), and the projector's read-your-writes positions are recorded per key.
   * Stored in the events table's `account_id` column (a rename would migrate every stored event).
   */
  partitionKey: string;
  /** Deterministic when the caller needs idempotence; random otherwise. */
  eventId?: string;
  /** ISO-8601; the command's time. */
  occurredAt: string;
}

export interface StoredEvent<T = unknown> {
  position: string;
  eventId: string;
  streamId: string;
  streamVersion: number;
  type: string;
  version: number;
  /** The partition key it was appended with (`NewEvent.partitionKey`; column `account_id`). */
  partitionKey: string;
  data: T;
  occurredAt: string;
}

/** `no_stream`: the stream must not exist; a number: its current version must equal it. */
export type ExpectedVersion = number | 'no_stream' | 'any';

export interface StreamAppend {
  streamId: string;
  expectedVersion: ExpectedVersion;
  events: NewEvent[];
}

export class ConcurrencyError extends Error {
  override readonly name = 'ConcurrencyError';
  readonly streamId: string;
  constructor(streamId: string) {
    super(`Stream ${streamId} changed concurrently`);
    this.streamId = streamId;
  }
}

/** Validates an event's data against its schema before it is stored (a bad event never reaches the outbox). */
export interface EventValidator {
  assertValid(type: string, version: number, data: unknown): void;
  /**
   * The newest schema version of `type`: what an event is written as when it names none, so a
   * writer always writes the latest shape and readers resolve older ones (a new version only adds
   * fields with defaults).
   */
  latestVersion?(type: string): number;
}
