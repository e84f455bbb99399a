import { sql } from '@oan/db';
import { normalizePlatform } from '@oan/protocol';
import { decideGofer, normalizeLocale, placeholderTexts } from '../domain/gofer';
import { goferWebUrl, runGoferCommand, type GoferContext } from './context';

export interface CreateGoferInput {
  accountId: string;
  /** The account's registration platform when the caller has it (the authenticated principal's). */
  sourcePlatform?: string;
  locale?: string;
  humanReviewTriggers?: string[];
}

export interface CreatedGofer {
  goferId: string;
  chatId: string;
  greeting: string;
  webUrl?: string;
}

/**
 * §2.6 / §10.11: a Gofer inherits the platform its account registered with, never one from the
 * request. Read from the projector's `read.accounts`, or — when a connector creates a Gofer right
 * after joining, before the projector applied the registration — from the credential view auth writes
 * in the registration's own transaction (`auth.accounts`); `other` when neither has the account.
 */
export async function registrationPlatform(ctx: GoferContext, accountId: string): Promise<string> {
  const [row] = await sql<{ source_platform: string | null }>(
    ctx.orm.em.fork(),
    `select coalesce((select source_platform from read.accounts where id = ?),
                     (select source_platform from auth.accounts where id = ?)) as source_platform`,
    [accountId, accountId],
  );
  return normalizePlatform(row?.source_platform);
}

/**
 * §4.4 (11): the Gofer, its role-chat and the seeded greeting, in one append: a new stream (the
 * Gofer id is fresh), so one statement and no transaction.
 */
export async function createGofer(ctx: GoferContext, input: CreateGoferInput): Promise<CreatedGofer> {
  const goferId = ctx.ids();
  const chatId = ctx.ids();
  const locale = normalizeLocale(input.locale);
  const sourcePlatform =
    input.sourcePlatform !== undefined
      ? normalizePlatform(input.sourcePlatform)
      : await registrationPlatform(ctx, input.accountId);
  await runGoferCommand(
    ctx,
    goferId,
    (state, now) => ({
      accountId: input.accountId,
      events: decideGofer(
        {
          type: 'CreateGofer',
          data: {
            goferId,
            accountId: input.accountId,
            chatId,
            greetingId: ctx.ids(),
            locale,
            humanReviewTriggers: input.humanReviewTriggers ?? [],
            sourcePlatform,
          },
          metadata: { now },
        },
        state,
      ),
    }),
    { newStream: true },
  );
  return { goferId, chatId, greeting: placeholderTexts(locale).greeting, ...goferWebUrl(ctx, goferId) };
}
