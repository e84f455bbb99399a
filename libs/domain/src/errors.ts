/**
 * The kinds of coded refusal every context's pure domain throws (STYLE.md "Errors"). A context
 * subclasses each kind once with its own code union; its HTTP layer maps kind and code to the status
 * and `{error, code}` body the spec requires, in one place. Nothing here knows about HTTP.
 */
export abstract class CodedError<C extends string> extends Error {
  readonly code: C;
  constructor(code: C, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }
}

/** The aggregate (or the thing inside it) does not exist. */
export abstract class NotFoundError<C extends string> extends CodedError<C> {}

/** The caller may not touch it (ownership, recipient-only decisions). */
export abstract class ForbiddenError<C extends string> extends CodedError<C> {}

/** The aggregate's state forbids the command. */
export abstract class IllegalStateError<C extends string> extends CodedError<C> {}

/** The caller's input is refused before any state is touched. */
export abstract class RejectedError<C extends string> extends CodedError<C> {}

/** A dependency failed; nothing was left half done. */
export abstract class UnavailableError<C extends string> extends CodedError<C> {}
