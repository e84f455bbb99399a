import { v4 as uuidv4 } from 'uuid';
import { ApiError } from '../api/client';

/** The keys changed between reading them and sending: read them again and seal once more. */
const RESEAL = new Set(['SEALED_RECIPIENTS_MISSING', 'RECIPIENT_HAS_NO_KEY']);

interface Attempt<B> {
  input: string;
  clientMessageId: string;
  body: B;
}

/**
 * Sends that survive a retry: each slot (the composer, one message's correction) keeps its last
 * attempt until it succeeds. Trying the same input again after a failure that may have reached the
 * server (no answer, a 5xx) sends the same `clientMessageId` with the same body — the same sealed
 * bytes — so the server answers the first message again instead of storing a second. A refusal
 * (4xx) changed nothing: the next try composes afresh.
 */
export class RetryableSends<B> {
  private readonly attempts = new Map<string, Attempt<B>>();

  async send<T>(
    slot: string,
    input: string,
    compose: () => Promise<B>,
    post: (body: B, clientMessageId: string) => Promise<T>,
  ): Promise<T> {
    let attempt = this.attempts.get(slot);
    if (attempt?.input !== input) {
      attempt = {
        input, // uuid's v4, not crypto.randomUUID: that one exists only on secure origins, and plain sends work anywhere.
        clientMessageId: uuidv4(),
        body: await compose(),
      };
      this.attempts.set(slot, attempt);
    }
    try {
      let result: T;
      try {
        result = await post(attempt.body, attempt.clientMessageId);
      } catch (err) {
        if (!(err instanceof ApiError && err.code !== undefined && RESEAL.has(err.code))) throw err;
        // Refused, so nothing was stored under this clientMessageId: it may carry the new body.
        attempt.body = await compose();
        result = await post(attempt.body, attempt.clientMessageId);
      }
      this.attempts.delete(slot);
      return result;
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) this.attempts.delete(slot);
      throw err;
    }
  }
}
