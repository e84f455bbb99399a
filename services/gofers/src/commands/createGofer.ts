import { registeredPlatformOf } from '@oan/auth';
import { normalizePlatform } from '@oan/protocol';
import { goferStreamId } from '@oan/domain';
import { normalizeLocale, placeholderTexts } from '../domain/goferTexts.ts';
import { goferCommands, goferWebUrl, type GoferContext } from './context.ts';

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
 * A Gofer inherits the platform its account registered with, never one from the
 * request: from the credential view, written in the registration's own transaction, so a connector
 * that creates a Gofer right after joining finds it; `other` for an unknown account.
 */
export async function registrationPlatform(ctx: GoferContext, accountId: string): Promise<string> {
  return normalizePlatform(await registeredPlatformOf(ctx.orm.em.fork(), accountId));
}

/**
 * Creating a Gofer: the Gofer, its role-chat and the seeded greeting, in one append: a new stream (the
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
  const data = {
    goferId,
    accountId: input.accountId,
    chatId,
    greetingId: ctx.ids(),
    locale,
    humanReviewTriggers: input.humanReviewTriggers ?? [],
    sourcePlatform,
  };
  await goferCommands(ctx)(goferStreamId(goferId), { type: 'CreateGofer', data }, { newStream: true });
  return { goferId, chatId, greeting: placeholderTexts(locale).greeting, ...goferWebUrl(ctx, goferId) };
}
