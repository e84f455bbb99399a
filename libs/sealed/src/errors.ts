import { CodedError } from '@oan/domain';

/**
 * A sealed message that does not open for this reader. One class and one message whatever went
 * wrong (another conversation, another claimed sender, a changed byte, a key that is not its
 * recipient), so that an error shown or logged tells an attacker nothing about which check failed.
 */
export class SealedOpenError extends CodedError<'SEALED_CORRUPT'> {
  constructor() {
    super('SEALED_CORRUPT', 'The sealed message cannot be opened');
  }
}

/** The caller's own input to seal or open is unusable (a bad id, key or content); a programming error. */
export class SealedInputError extends CodedError<'SEALED_INVALID_INPUT'> {
  constructor(message: string) {
    super('SEALED_INVALID_INPUT', message);
  }
}
