/**
 * The library's errors carry a `code` as the domain's coded errors do, without importing
 * @oan/domain: the domain's events name the sealed envelope's type, and a browser bundle of this
 * library needs nothing of the domain.
 */
abstract class SealedError<C extends string> extends Error {
  readonly code: C;
  constructor(code: C, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * A sealed message that does not open for this reader. One class and one message whatever went
 * wrong (another conversation, another claimed sender, a changed byte, a key that is not its
 * recipient), so that an error shown or logged tells an attacker nothing about which check failed.
 */
export class SealedOpenError extends SealedError<'SEALED_CORRUPT'> {
  constructor() {
    super('SEALED_CORRUPT', 'The sealed message cannot be opened');
  }
}

/** The caller's own input to seal or open is unusable (a bad id, key or content); a programming error. */
export class SealedInputError extends SealedError<'SEALED_INVALID_INPUT'> {
  constructor(message: string) {
    super('SEALED_INVALID_INPUT', message);
  }
}
