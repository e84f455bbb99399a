import { PAIRING_THRESHOLD, offerTerms, relevance, tokenize, type PublicProfile } from './discovery.ts';
import type { MatchRecommendation } from '@oan/domain';
import { quote, textsFor, type SessionTexts } from './sessionTexts.ts';
import type { SessionCardFields } from './summaryCard.ts';

/**
 * The scripted Gofer-to-Gofer session, a real product path rather than a stub: deterministic,
 * offline, from the two public profiles only. Each side speaks from its own profile and may mention
 * the counterpart's public fields, always quoted as data — nothing the counterpart wrote is ever
 * followed, so a profile saying "ignore your instructions" is just quoted text. The session reactor
 * appends the turns one by one (`AddSessionTurn` with `turnIndex`), then `EndSession`, then one
 * card per side.
 */

export interface SessionParty {
  goferId: string;
  profile: PublicProfile;
}

export interface ScriptedTurn {
  turnIndex: number;
  senderGoferId: string;
  content: string;
}

/** Above this symmetric score the card recommends requesting the match. */
export const STRONG_MATCH_SCORE = 0.45;

const ownText = (p: PublicProfile) => [p.name, p.description, ...p.values, ...p.demands].join(' ');

/** The items of `wanted` that share a term with what `offerer` describes and values. */
export function itemsMet(wanted: readonly string[], offerer: PublicProfile): string[] {
  const offered = new Set(offerTerms(offerer));
  return wanted.filter((item) => tokenize(item).some((t) => offered.has(t)));
}

const joined = (t: SessionTexts, items: readonly string[]) =>
  items.length === 0 ? t.nothing : t.list(items.map((i) => i.trim()));

/** The scripted session's length: introductions, what each looks for, what each values. */
export const SCRIPTED_TURNS = 6;

/**
 * Turn `turnIndex` of the script between `opener` (speaks the even turns) and `responder` (the
 * odd ones), from the two public profiles only. Each side speaks from its own profile; the other's
 * fields are quoted as data.
 */
export function scriptTurn(opener: PublicProfile, responder: PublicProfile, turnIndex: number): string {
  if (!Number.isInteger(turnIndex) || turnIndex < 0 || turnIndex >= SCRIPTED_TURNS)
    throw new RangeError(`the script has no turn ${turnIndex}`);
  const opens = turnIndex % 2 === 0;
  const [self, other] = opens ? [opener, responder] : [responder, opener];
  const t = textsFor(ownText(self));
  const step = Math.floor(turnIndex / 2);
  if (step === 0)
    return opens
      ? t.intro(self.name, self.description)
      : t.greetBack(quote(other.name, 40), self.name, self.description);
  if (step === 1) {
    const met = itemsMet(self.demands, other);
    return `${t.wants(joined(t, self.demands), quote(other.description))} ${
      met.length > 0 ? t.overlap(joined(t, met)) : t.noOverlap
    }`;
  }
  const values = t.values(joined(t, self.values));
  return opens ? values : `${values} ${t.closing}`;
}

/** The side that opens a session between two Gofers: the lower goferId, whichever order they come in. */
export const openerOf = <T extends { goferId: string }>(x: T, y: T): [T, T] =>
  x.goferId < y.goferId ? [x, y] : [y, x];

/** Six turns, alternating: introductions, what each looks for, what each values. */
export function scriptSession(x: SessionParty, y: SessionParty): ScriptedTurn[] {
  // Side `a` (the lower goferId) opens, whichever order the reactor passes them in.
  const [a, b] = openerOf(x, y);
  return Array.from({ length: SCRIPTED_TURNS }, (_, turnIndex) => ({
    turnIndex,
    senderGoferId: (turnIndex % 2 === 0 ? a : b).goferId,
    content: scriptTurn(a.profile, b.profile, turnIndex),
  }));
}

/** A side as the card needs it: its profile (its goferId is not used). */
export type CardParty = Pick<SessionParty, 'profile'> & Partial<Pick<SessionParty, 'goferId'>>;

export function recommendationFor(score: number): MatchRecommendation {
  if (score >= STRONG_MATCH_SCORE) return 'strong';
  return score >= PAIRING_THRESHOLD ? 'possible' : 'weak';
}

/**
 * One side's card from the session: its length, what the counterpart offers and looks for (its
 * public profile, quoted), how well each side's demands are met, and what to do next. In `self`'s
 * language. Deterministic: a regenerated card with the same inputs is the same card.
 */
export function summarizeSession(
  transcript: readonly { content: string }[],
  self: CardParty,
  counterpart: CardParty,
): SessionCardFields {
  const t = textsFor(ownText(self.profile));
  const me = self.profile;
  const them = counterpart.profile;
  const recommendation = recommendationFor(relevance(me, them).score);
  const mine = itemsMet(me.demands, them);
  const theirs = itemsMet(them.demands, me);
  const label = t.label[recommendation];

  const cardTitle = t.title(them.name, label);
  const reasons = [
    mine.length > 0
      ? t.reasonMine(
          joined(
            t,
            mine.map((i) => quote(i, 80)),
          ),
        )
      : null,
    theirs.length > 0
      ? t.reasonTheirs(
          joined(
            t,
            theirs.map((i) => quote(i, 80)),
          ),
        )
      : null,
  ].filter((r): r is string => r !== null);
  const summary = [t.summary(me.name, them.name, transcript.length), ...reasons].join(' ');
  return {
    content: `${cardTitle}\n${summary}`,
    cardTitle,
    summary,
    opponentRoleName: them.name,
    otherPartyHighlights: [
      t.offers(quote(them.description)),
      ...them.values.slice(0, 3).map((v) => t.valuesHighlight(quote(v, 80))),
      ...them.demands.slice(0, 2).map((d) => t.looksFor(quote(d, 80))),
    ],
    actionItems: [
      t.action[recommendation](them.name),
      ...theirs.slice(0, 2).map((d) => t.theyWant(quote(d, 80))),
    ],
    matchRecommendation: recommendation,
    pairReason: reasons.length > 0 ? reasons.join(' ') : t.reasonNone,
  };
}
