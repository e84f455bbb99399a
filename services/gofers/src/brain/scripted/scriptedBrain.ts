import type { DiscoveryStatus } from '@oan/domain';
import type {
  BrainInput,
  BrainOutput,
  BrainProvider,
  CallerBrain,
  CallerInput,
  CallerOutput,
  PublicProfile,
} from '../types.ts';
import { scriptedCallerReply } from './caller.ts';
import {
  askedBefore,
  descriptionAnswered,
  firstMissing,
  isSlot,
  lastUserBefore,
  type Slot,
  type Step,
} from './interview.ts';
import {
  clip,
  explicitName,
  goalText,
  matchTrigger,
  nameFromGoal,
  splitDemands,
  splitItems,
  withoutName,
  yesNo,
} from './parse.ts';
import { findFact, isQuestion } from './knowledge.ts';
import { textsFor, type Texts } from './texts.ts';

const BOOLEAN = { format: 'boolean' } as const;
/** Rows of the chat that are about callers, not the interview (ADR 0023, ADR 0036). */
const CALLER_KINDS = new Set([
  'relay',
  'a2a',
  'caller_question',
  'owner_answer',
  'caller_answer',
  'caller_withdrawn',
]);

/** One turn in the making: the profile as it becomes, and the sentences said so far. */
interface Draft {
  t: Texts;
  zh: boolean;
  profile: PublicProfile;
  described: boolean;
  status: DiscoveryStatus;
  parts: string[];
  /** Explicit names the owner gave earlier: a name derived from the goal never overrides one. */
  namedBefore: boolean;
}

/**
 * The default brain (scripted: a real product path, not a stub): a deterministic interview that fills the public profile from
 * the owner's answers, escalates on human-review triggers, and asks before discovery starts.
 * Profile-building follow-ups are plain messages; only approvals are pending queries
 * (so profile questions reach the connector as `gofer_message`, approvals as `gofer_question`).
 */
export class ScriptedBrain implements BrainProvider, CallerBrain {
  readonly kind = 'scripted';

  async reply(input: BrainInput): Promise<BrainOutput> {
    return scriptedReply(input);
  }

  async answerCaller(input: CallerInput): Promise<CallerOutput> {
    return scriptedCallerReply(input);
  }
}

export function scriptedReply(input: BrainInput): BrainOutput {
  const { gofer, knowledge } = input;
  // The interview is with the owner: relay callers' turns and callers' questions are not part of it.
  const history = input.history.filter((h) => !CALLER_KINDS.has(h.kind ?? ''));
  const { name, description, values, demands } = gofer;
  const d: Draft = {
    t: textsFor(gofer.locale),
    zh: gofer.locale.toLowerCase().startsWith('zh'),
    profile: { name, description, values: [...values], demands: [...demands] },
    described: descriptionAnswered(history),
    status: gofer.discoveryStatus,
    parts: [],
    namedBefore: history.some((h) => h.role === 'user' && explicitName(h.content) !== null),
  };
  const content = input.message.content.trim();
  const asked = askedBefore(history, history.length);

  if (asked === 'review') {
    // The owner answers a human-review question about the message before it (held back, unapplied).
    const held = lastUserBefore(history, history.length);
    const heldStep = held ? stepAt(d, history, held.at) : null;
    const answer = yesNo(content);
    if (answer === null || !held) {
      const trigger = held ? matchTrigger(held.content, gofer.humanReviewTriggers) : null;
      return done(d, gofer, `${d.t.review(trigger ?? '…')} ${d.t.yesOrNo}`, true);
    }
    d.parts.push(answer === 'yes' ? d.t.reviewYes : d.t.reviewNo);
    if (answer === 'yes') return answerStep(d, gofer, heldStep, held.content.trim(), knowledge);
    return next(d, gofer);
  }

  const trigger = matchTrigger(content, gofer.humanReviewTriggers);
  if (trigger) return done(d, gofer, d.t.review(trigger), true);
  return answerStep(d, gofer, stepAt(d, history, history.length), content, knowledge);
}

/** The step a user message at `index` answers: the question before it, else the first open slot. */
function stepAt(d: Draft, history: BrainInput['history'], index: number): Step | null {
  const asked = askedBefore(history, index);
  if (isSlot(asked) || asked === 'start') return asked;
  return d.status === 'ready_for_pairing' ? null : (firstMissing(d.profile, d.described) ?? 'start');
}

function answerStep(
  d: Draft,
  gofer: BrainInput['gofer'],
  step: Step | null,
  content: string,
  knowledge: string[],
): BrainOutput {
  const named = explicitName(content);
  if (named && named !== d.profile.name) {
    d.profile.name = named;
    d.parts.push(d.t.named(named));
  }
  if (content.length === 0) {
    d.parts.push(d.t.gotAttachment);
    return next(d, gofer);
  }
  const fact = knowledge.length > 0 && isQuestion(content) ? findFact(content, knowledge) : null;
  if (fact) {
    d.parts.push(d.t.fact(fact));
    return next(d, gofer);
  }
  if (step === 'start' || (step === null && d.status !== 'ready_for_pairing')) {
    const answer = yesNo(content);
    if (answer === 'yes') {
      d.status = 'ready_for_pairing';
      d.parts.push(d.t.started);
      return next(d, gofer);
    }
    if (answer === 'no') return done(d, gofer, d.t.notYet, false);
    if (!named) d.parts.push(d.t.yesOrNo);
    return next(d, gofer);
  }
  const rest = named ? withoutName(content) : content;
  if (isSlot(step) && rest) fill(d, step, rest, named !== null);
  if (step === null && !named) d.parts.push(d.t.noted);
  return next(d, gofer);
}

function fill(d: Draft, slot: Slot, content: string, namedNow: boolean): void {
  switch (slot) {
    case 'demands': {
      d.profile.demands = splitDemands(goalText(content, d.zh));
      d.parts.push(d.t.goal(d.profile.demands.join(d.zh ? '；' : '; ')));
      if (!namedNow && !d.namedBefore) {
        d.profile.name = nameFromGoal(d.profile.demands[0] ?? content, d.zh);
        d.parts.push(d.t.named(d.profile.name));
      }
      return;
    }
    case 'description':
      d.profile.description = clip(content, 500);
      d.described = true;
      d.parts.push(d.t.thanks);
      return;
    case 'values':
      d.profile.values = splitItems(content);
      d.parts.push(d.t.thanks);
      return;
    default: {
      const never: never = slot;
      return never;
    }
  }
}

/** Closes the turn with the next open question, or the summary and the start question once complete. */
function next(d: Draft, gofer: BrainInput['gofer']): BrainOutput {
  if (d.status === 'ready_for_pairing') return done(d, gofer, null, false);
  const missing = firstMissing(d.profile, d.described);
  if (missing === 'demands') return done(d, gofer, d.t.askDemands, false);
  if (missing === 'description') return done(d, gofer, d.t.askDescription, false);
  if (missing === 'values') return done(d, gofer, d.t.askValues, false);
  return done(d, gofer, `${d.t.summary(d.profile)}\n\n${d.t.askStart}`, true);
}

function done(d: Draft, gofer: BrainInput['gofer'], last: string | null, pending: boolean): BrainOutput {
  const out: BrainOutput = {
    content:
      [...d.parts, ...(last ? [last] : [])].join(d.zh ? '' : ' ').replace(/ ?\n\n/g, '\n\n') || d.t.noted,
    pendingQuery: pending,
    responseConstraints: pending ? BOOLEAN : null,
  };
  const before: PublicProfile = gofer;
  const changed =
    d.profile.name !== before.name ||
    d.profile.description !== before.description ||
    JSON.stringify(d.profile.values) !== JSON.stringify(before.values) ||
    JSON.stringify(d.profile.demands) !== JSON.stringify(before.demands);
  if (changed) out.profile = d.profile;
  if (d.status !== gofer.discoveryStatus) out.discoveryStatus = d.status;
  return out;
}
