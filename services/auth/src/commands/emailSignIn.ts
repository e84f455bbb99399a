import { RejectedError, UnavailableError } from '../domain/errors.ts';
import { isDisposableEmail } from '../infra/disposable.ts';
import { type EmailCodeStore, hashesEqual, newEmailCode } from '../infra/emailCodes.ts';
import { sha256Hex } from '../infra/ids.ts';
import type { Mailer } from '../infra/mailer.ts';

export interface EmailSignInDeps {
  codes: EmailCodeStore;
  mailer: Mailer;
  /** OAN_TEST_LOGIN_CODES: email → fixed code (never in production, enforced by the config). */
  testCodes: ReadonlyMap<string, string>;
  log: { warn(obj: object, msg: string): void };
}

const mailText = (code: string) =>
  `Your OAN sign-in code is ${code}\n\nIt expires in 5 minutes. If you did not ask for it, ignore this email.\n`;

/**
 * Requesting an emailed sign-in code. `email` is already trimmed and lower-cased. The answer is the
 * same for new and existing emails (no "account exists" signal).
 */
export async function requestEmailCode(deps: EmailSignInDeps, email: string): Promise<void> {
  if (isDisposableEmail(email))
    throw new RejectedError('DISPOSABLE_EMAIL', 'Disposable email domains are not allowed');
  // Test accounts' fixed codes (never in production): no mailbox behind these addresses, so nothing
  // is sent and nothing expires.
  if (deps.testCodes.has(email)) return;
  if (!(await deps.codes.startCooldown(email))) {
    throw new RejectedError(
      'EMAIL_COOLDOWN',
      'Too many requests: wait a minute before asking for another code',
    );
  }
  const code = newEmailCode();
  const codeHash = sha256Hex(code);
  await deps.codes.save(email, codeHash);
  try {
    await deps.mailer.send({ to: email, subject: 'Your OAN sign-in code', text: mailText(code) });
  } catch (err) {
    // A code nobody received must not stay usable, and the caller may retry at once.
    await deps.codes.discard(email, codeHash);
    await deps.codes.endCooldown(email);
    deps.log.warn({ err: { message: (err as Error).message } }, 'sign-in code email could not be sent');
    throw new UnavailableError('MAIL_UNAVAILABLE', 'Could not send the sign-in code email; try again later');
  }
}

/** Verifying an emailed code: passes once per emailed code (consuming it); test codes pass every time. */
export async function checkEmailCode(deps: EmailSignInDeps, email: string, code: string): Promise<void> {
  const fixed = deps.testCodes.get(email);
  const ok =
    fixed !== undefined
      ? hashesEqual(sha256Hex(fixed), sha256Hex(code))
      : await deps.codes.consume(email, code);
  if (!ok) throw new RejectedError('EMAIL_CODE_INVALID', 'Unauthorized: invalid or expired code');
}
