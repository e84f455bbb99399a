import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildBrainInput,
  scriptedReply,
  type BrainGofer,
  type BrainInput,
  type BrainOutput,
  type HistoryItem,
} from '../src/brain/index.ts';
import { TEXTS } from '../src/brain/scripted/texts.ts';
import type { GoferEvent } from '@oan/domain';
import { placeholderTexts } from '../src/domain/goferTexts.ts';

/** A Gofer as POST /gofers leaves it: placeholder profile, the greeting as the first message. */
function newGofer(locale = 'en', humanReviewTriggers: string[] = []) {
  const t = placeholderTexts(locale);
  const gofer: BrainGofer = {
    goferId: 'g-1',
    locale,
    name: t.name,
    description: t.description,
    values: [],
    demands: [],
    humanReviewTriggers,
    discoveryStatus: 'in_discovery',
  };
  const history: HistoryItem[] = [{ role: 'assistant', content: t.greeting, pendingQuery: false }];
  return { gofer, history };
}

/** Plays the reactor: each reply is appended and its profile and status applied, as addAssistantTurn does. */
function converse(start: ReturnType<typeof newGofer>, messages: string[], knowledge: string[] = []) {
  let { gofer } = start;
  const history = [...start.history];
  const replies: BrainOutput[] = [];
  messages.forEach((content, i) => {
    const input: BrainInput = {
      gofer,
      history: [...history],
      message: { messageId: `m${i}`, content },
      knowledge,
    };
    const out = scriptedReply(input);
    replies.push(out);
    gofer = {
      ...gofer,
      ...out.profile,
      ...(out.discoveryStatus ? { discoveryStatus: out.discoveryStatus } : {}),
    };
    history.push(
      { role: 'user', content, pendingQuery: false },
      { role: 'assistant', content: out.content, pendingQuery: out.pendingQuery },
    );
  });
  return { gofer, replies, last: replies.at(-1)! };
}

const en = TEXTS.en;
const zh = TEXTS.zh;

describe('given a new Gofer, when the owner answers the interview', () => {
  const goal = "I'm looking for a co-founder for my robotics startup";
  const about = "I'm a robotics engineer with ten years in hardware; I bring the prototype.";
  const matters = 'honesty, speed and a sense of humour';

  it('then the goal fills the demands and names the Gofer, and the next question is a plain message', () => {
    const { gofer, last } = converse(newGofer(), [goal]);
    expect(gofer.demands).toEqual(['a co-founder for my robotics startup']);
    expect(gofer.name).toBe('Co-Founder Scout');
    expect(last).toMatchObject({ pendingQuery: false, responseConstraints: null });
    expect(last.content).toContain(en.askDescription);
    expect(last.discoveryStatus).toBeUndefined();
  });

  it('then the whole conversation reaches ready_for_pairing after a yes to the start question', () => {
    const { gofer, replies } = converse(newGofer(), [goal, about, matters, 'yes']);
    expect(replies.map((r) => r.pendingQuery)).toEqual([false, false, true, false]);
    expect(replies[1]!.content).toContain(en.askValues);
    expect(replies[2]!.content.endsWith(en.askStart)).toBe(true);
    expect(replies[2]!.responseConstraints).toEqual({ format: 'boolean' });
    expect(replies[2]!.content).toContain('• What matters: honesty, speed, a sense of humour');
    expect(replies[3]).toEqual({
      content: en.started,
      pendingQuery: false,
      responseConstraints: null,
      discoveryStatus: 'ready_for_pairing',
    });
    expect(gofer).toMatchObject({
      name: 'Co-Founder Scout',
      description: about,
      values: ['honesty', 'speed', 'a sense of humour'],
      demands: ['a co-founder for my robotics startup'],
      discoveryStatus: 'ready_for_pairing',
    });
  });

  it('then a no keeps the Gofer in discovery until the owner says start', () => {
    const declined = converse(newGofer(), [goal, about, matters, 'not yet']);
    expect(declined.last).toEqual({ content: en.notYet, pendingQuery: false, responseConstraints: null });
    expect(declined.gofer.discoveryStatus).toBe('in_discovery');
    const started = converse(newGofer(), [goal, about, matters, 'no', 'ok, start']);
    expect(started.last.discoveryStatus).toBe('ready_for_pairing');
  });

  it('then an answer that is neither yes nor no asks again, still as a boolean question', () => {
    const { last, gofer } = converse(newGofer(), [goal, about, matters, 'hmm']);
    expect(last.pendingQuery).toBe(true);
    expect(last.content.startsWith(en.yesOrNo)).toBe(true);
    expect(gofer.discoveryStatus).toBe('in_discovery');
  });

  it('then an explicit name wins over the one derived from the goal, wherever it comes', () => {
    expect(converse(newGofer(), ['Find me a designer. Call you Pixel.']).gofer.name).toBe('Pixel');
    const later = converse(newGofer(), [goal, about, 'name: Bolt; honesty, speed']);
    expect(later.gofer.name).toBe('Bolt');
    expect(later.gofer.values).toEqual(['honesty', 'speed']);
  });

  it('then a message without text (an attachment) is acknowledged and the question asked again', () => {
    const { last, gofer } = converse(newGofer(), [goal, '']);
    expect(last.content).toBe(`${en.gotAttachment} ${en.askDescription}`);
    expect(gofer.description).toBe(placeholderTexts('en').description);
  });
});

describe('given a Gofer with a human-review trigger, when the owner mentions it', () => {
  const start = () => newGofer('en', ['Salary']);
  const goal = 'Find me a backend engineer';

  it('then it asks for approval as a boolean pending query quoting the trigger, and changes nothing', () => {
    const { last, gofer } = converse(start(), [goal, 'We offer a salary of 90k and equity']);
    expect(last).toEqual({
      content: en.review('Salary'),
      pendingQuery: true,
      responseConstraints: { format: 'boolean' },
    });
    expect(gofer.description).toBe(placeholderTexts('en').description);
  });

  it('then a yes applies the held answer and the interview goes on', () => {
    const { last, gofer } = converse(start(), [goal, 'We offer a salary of 90k and equity', 'yes']);
    expect(gofer.description).toBe('We offer a salary of 90k and equity');
    expect(last.content).toBe(`${en.reviewYes} ${en.thanks} ${en.askValues}`);
    expect(last.pendingQuery).toBe(false);
  });

  it('then a no drops the held answer and asks the same question again', () => {
    const { last, gofer } = converse(start(), [goal, 'We offer a salary of 90k', 'no']);
    expect(gofer.description).toBe(placeholderTexts('en').description);
    expect(last.content).toBe(`${en.reviewNo} ${en.askDescription}`);
  });
});

describe('given a Gofer with parsed documents, when the owner asks about them', () => {
  it('then the reply quotes the matching fact and the profile is unchanged', () => {
    const knowledge = ['Our office is in Berlin.\nWe pay 5000 EUR per month.'];
    const { last, gofer } = converse(newGofer(), ['Find me a designer', 'Where is our office?'], knowledge);
    expect(last.content).toBe(`${en.fact('Our office is in Berlin.')} ${en.askDescription}`);
    expect(last.profile).toBeUndefined();
    expect(gofer.description).toBe(placeholderTexts('en').description);
  });
});

describe('given a zh Gofer, when the owner answers in Chinese', () => {
  it('then the interview speaks Chinese and reaches ready_for_pairing', () => {
    const { gofer, replies } = converse(newGofer('zh-CN'), [
      '我想找一位技术合伙人',
      '我是产品经理，有十年经验',
      '诚实、效率和幽默感',
      '好的',
    ]);
    expect(replies[0]!.content).toContain(zh.askDescription);
    expect(replies[1]!.content).toContain(zh.askValues);
    expect(replies[2]!.content.endsWith(zh.askStart)).toBe(true);
    expect(replies[3]!.content).toBe(zh.started);
    expect(gofer).toMatchObject({
      name: '技术合伙人寻访员',
      demands: ['一位技术合伙人'],
      description: '我是产品经理，有十年经验',
      values: ['诚实', '效率', '幽默感'],
      discoveryStatus: 'ready_for_pairing',
    });
  });

  it('then a trigger is quoted in Chinese', () => {
    const { last } = converse(newGofer('zh', ['薪资']), ['帮我找设计师', '薪资面议']);
    expect(last).toEqual({
      content: zh.review('薪资'),
      pendingQuery: true,
      responseConstraints: { format: 'boolean' },
    });
  });
});

describe('given any input, when the scripted brain replies', () => {
  it('then the same input gives the same output, never empty, and only pending queries carry constraints', () => {
    const item = fc.record({
      role: fc.constantFrom('user' as const, 'assistant' as const),
      content: fc.oneof(
        fc.string(),
        fc.constantFrom(en.askValues, en.askStart, zh.askDescription, en.review('x')),
      ),
      pendingQuery: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 8 }),
        fc.string(),
        fc.constantFrom('en', 'zh'),
        (history, content, locale) => {
          const { gofer } = newGofer(locale, ['secret']);
          const input: BrainInput = {
            gofer,
            history,
            message: { messageId: 'm', content },
            knowledge: ['a fact'],
          };
          const out = scriptedReply(input);
          expect(scriptedReply(structuredClone(input))).toEqual(out);
          expect(out.content.length).toBeGreaterThan(0);
          expect(out.responseConstraints).toEqual(out.pendingQuery ? { format: 'boolean' } : null);
        },
      ),
    );
  });
});

describe('given a Gofer stream, when the brain input for one user message is built', () => {
  const ids = { goferId: 'g-1', accountId: 'a-1' };
  const created: GoferEvent = {
    type: 'GoferCreated',
    data: {
      ...ids,
      chatId: 'c-1',
      locale: 'en',
      name: 'N',
      description: 'D',
      sourcePlatform: 'other',
      humanReviewTriggers: ['x'],
      createdAt: 't',
    },
  };
  const chat = (
    messageId: string,
    role: 'user' | 'assistant',
    replyTo: string | null = null,
  ): GoferEvent => ({
    type: 'ChatMessageAdded',
    data: {
      ...ids,
      chatId: 'c-1',
      messageId,
      role,
      content: messageId,
      attachmentIds: [],
      kind: null,
      pairing: null,
      pendingQuery: false,
      responseConstraints: null,
      replyTo,
      createdAt: 't',
    },
  });
  const rag = (
    attachmentId: string,
    ragStatus: 'ready' | 'failed',
    knowledge: string | null,
  ): GoferEvent => ({
    type: 'AttachmentRagStatusChanged',
    data: { ...ids, attachmentId, ragStatus, knowledge, changedAt: 't' },
  });
  const attachment = (attachmentId: string): GoferEvent => ({
    type: 'AttachmentAdded',
    data: {
      ...ids,
      attachmentId,
      kind: 'document',
      name: 'f.txt',
      mimeType: 'text/plain',
      size: 1,
      width: null,
      height: null,
      storageKey: 'k',
      ragStatus: 'processing',
      createdAt: 't',
    },
  });

  it('then history holds the chat before it and the replies to earlier messages, never later user messages', () => {
    const events = [
      created,
      chat('greet', 'assistant'),
      chat('u1', 'user'),
      chat('u2', 'user'),
      chat('a1', 'assistant', 'u1'),
      chat('u3', 'user'),
    ];
    const built = buildBrainInput(events, 'u2');
    expect(built.kind).toBe('reply');
    if (built.kind !== 'reply') return;
    expect(built.input.history.map((h) => h.content)).toEqual(['greet', 'u1', 'a1']);
    expect(built.input.message).toEqual({ messageId: 'u2', content: 'u2' });
    expect(built.input.gofer).toMatchObject({
      goferId: 'g-1',
      humanReviewTriggers: ['x'],
      discoveryStatus: 'in_discovery',
    });
  });

  it('then only documents whose latest status is ready are knowledge', () => {
    const events = [
      created,
      attachment('d1'),
      attachment('d2'),
      rag('d1', 'ready', 'fact one'),
      rag('d2', 'ready', 'fact two'),
      rag('d2', 'failed', null),
      chat('u1', 'user'),
    ];
    const built = buildBrainInput(events, 'u1');
    expect(built.kind === 'reply' && built.input.knowledge).toEqual(['fact one']);
  });

  it('then an answered message, a deleted Gofer, an unknown message or an assistant turn is skipped', () => {
    const deleted: GoferEvent = { type: 'GoferDeleted', data: { ...ids, deletedAt: 't' } };
    expect(buildBrainInput([created, chat('u1', 'user'), chat('a1', 'assistant', 'u1')], 'u1')).toEqual({
      kind: 'skip',
      reason: 'answered',
    });
    expect(buildBrainInput([created, chat('u1', 'user'), deleted], 'u1')).toEqual({
      kind: 'skip',
      reason: 'deleted',
    });
    expect(buildBrainInput([created], 'u9')).toEqual({ kind: 'skip', reason: 'unknown' });
    expect(buildBrainInput([], 'u9')).toEqual({ kind: 'skip', reason: 'unknown' });
    expect(buildBrainInput([created, chat('a1', 'assistant')], 'a1')).toEqual({
      kind: 'skip',
      reason: 'not_a_user_message',
    });
  });
});
