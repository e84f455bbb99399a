import type { CallerInput, CallerOutput } from '../types.ts';

/**
 * What a caller may ask that only the owner can answer, by topic: the scripted brain's rule for
 * asking its owner. A caller's message that matches one of these (en or zh, case-insensitive) is
 * not answered from the public profile: the Gofer asks its owner (`askOwner`, a question in its own
 * words that never quotes the caller) and tells the caller it will come back to them. The first
 * topic that matches names the question; `ask` ("ask your owner") asks the general one.
 */
export type OwnerTopic = 'availability' | 'price' | 'contact' | 'commitment' | 'ask';

const TOPICS: readonly (readonly [OwnerTopic, RegExp])[] = [
  [
    'availability',
    /\b(?:availab(?:le|ility)|free (?:on|at|this|next|tomorrow|today)|schedule|calendar|when can (?:we|i|you|they) meet|meet (?:on|at|this|next|tomorrow))\b|有空|空闲|时间安排|日程|什么时候(?:能|可以)?见/iu,
  ],
  [
    'price',
    /\b(?:price|prices|pricing|rates?|costs?|how much|fees?|budget|salary|quote)\b|价格|多少钱|费用|报价|薪资|预算/iu,
  ],
  [
    'contact',
    /\b(?:contact|phone|e-?mail|whatsapp|telegram|reach (?:your owner|them|him|her))\b|联系方式|电话|邮箱|微信/iu,
  ],
  ['commitment', /\b(?:commit|promise|guarantee|sign|agree to|deal)\b|承诺|保证|签约|答应/iu],
  [
    'ask',
    /\b(?:ask (?:your|the) (?:owner|human|boss|principal)|check with (?:your|the) (?:owner|human|boss))\b|问问?你的主人|问一下你的主人|请示你的主人/iu,
  ],
];

/** The topic of a caller's message that only the owner can answer, or null (the rule above). */
export function ownerTopic(message: string): OwnerTopic | null {
  return TOPICS.find(([, re]) => re.test(message))?.[0] ?? null;
}

const en = {
  hello: (name: string, description: string, looking: string) =>
    `Hi, I'm ${name}, a Gofer on the Open Agent Network. ${description}${looking ? ` I'm looking for: ${looking}.` : ''}`,
  passedOn: "I've passed your message on to my owner.",
  holding: "That is for my owner to answer: I'll ask my owner and come back to you.",
  turn: (n: number) => `This is your message ${n} to me.`,
  question: {
    availability: 'A caller asks when you are available. When are you free?',
    price: 'A caller asks about your prices. What may I tell them?',
    contact: 'A caller asks how to reach you. What contact may I share?',
    commitment: 'A caller asks for a commitment on your behalf. What should I answer?',
    ask: 'A caller asks something only you can answer. What should I tell them?',
  } satisfies Record<OwnerTopic, string>,
};

const zh: typeof en = {
  hello: (name, description, looking) =>
    `你好，我是 ${name}，开放代理网络上的一个 Gofer。${description}${looking ? `我在寻找：${looking}。` : ''}`,
  passedOn: '我已把你的消息转告我的主人。',
  holding: '这需要我的主人来回答：我会去问我的主人，然后回复你。',
  turn: (n) => `这是你发给我的第 ${n} 条消息。`,
  question: {
    availability: '有人问你什么时候有空。你什么时候方便？',
    price: '有人问你的价格。我可以怎么回答？',
    contact: '有人问怎么联系你。我可以告诉对方什么联系方式？',
    commitment: '有人希望你做出承诺。我该怎么回答？',
    ask: '有人问了只有你能回答的问题。我该怎么回复对方？',
  },
};

/** The caller texts in the Gofer's locale (zh, else en), as the role-chat's own texts choose. */
export const callerTextsFor = (locale: string) => (locale.toLowerCase().startsWith('zh') ? zh : en);

/**
 * The scripted brain's answer to a caller: the Gofer introduces itself from its public profile and
 * either says the owner will see the message, or, when the caller asks what only the owner can
 * answer (`ownerTopic`), says it will ask its owner and sets `askOwner`. It never repeats the
 * caller's words.
 */
export function scriptedCallerReply(input: CallerInput): CallerOutput {
  const { name, description, demands, locale } = input.gofer;
  const t = callerTextsFor(locale);
  const zhText = locale.toLowerCase().startsWith('zh');
  const hello = t.hello(name, description, demands.join(zhText ? '；' : '; '));
  const topic = ownerTopic(input.message);
  const join = (a: string, b: string) => (zhText ? `${a}${b}` : `${a} ${b}`);
  // It never quotes the caller; it only counts the caller's earlier turns, so a conversation shows
  // that the history reached it.
  const earlier = input.history.filter((h) => h.from === 'caller').length;
  const told = (text: string) => (earlier > 0 ? join(text, t.turn(earlier + 1)) : text);
  if (topic === null) return { content: told(join(hello, t.passedOn)), askOwner: null };
  return { content: told(join(hello, t.holding)), askOwner: t.question[topic] };
}
