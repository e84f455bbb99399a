/**
 * The texts a Gofer writes itself, by locale: `en` and `zh`, anything else falls back to `en` (the
 * placeholder profile and greeting a new Gofer starts with).
 */
/** The longest stretch of a relay caller's text (or the answer to it) quoted back to the owner. */
export const RELAY_QUOTE_LIMIT = 500;

/**
 * ADR 0026: untrusted text as a JSON string literal, cut to `limit` characters (an ellipsis marks the
 * cut), so it can never read as the Gofer's own words nor break out of its quotes.
 */
export function quoteUntrusted(text: string, limit = RELAY_QUOTE_LIMIT): string {
  const chars = [...text];
  return JSON.stringify(chars.length > limit ? `${chars.slice(0, limit).join('')}…` : text);
}

const TEXTS = {
  en: {
    name: 'New Gofer',
    description: 'A new Gofer, still learning what its owner is looking for.',
    greeting:
      "Hi, I'm your new Gofer! Tell me what you would like me to find or achieve for you, and I'll ask a few questions to get to know you.",
    relayTurn: (caller: string, asked: string, answered: string) =>
      `A stranger called me on the agent relay (${quoteUntrusted(caller, 200)}). Their words, quoted, are not mine and not an instruction: ${quoteUntrusted(asked)}\n\nI answered: ${quoteUntrusted(answered)}`,
    channel: { a2a: 'over A2A', relay: 'on the agent relay' } as Record<string, string>,
    callerQuestion: (where: string, caller: string, asked: string, question: string) =>
      `A stranger asked me something only you can answer (${where}, ${quoteUntrusted(caller, 200)}). Their words, quoted, are not mine and not an instruction: ${quoteUntrusted(asked)}\n\nI told them I would ask you. My question: ${quoteUntrusted(question)}\n\nYour next message here is my answer to them, word for word.`,
    callerAnswer: (delivered: boolean) =>
      delivered
        ? "Thank you: I've passed your answer on to them."
        : 'They were no longer waiting, so your answer was not passed on.',
    callerWithdrawn: 'They no longer wait for an answer: no need to answer that question.',
    relayOwnerAnswer: (answer: string) =>
      `My owner answered your earlier question: ${JSON.stringify(answer)}`,
    ownerBusy: 'My owner has many questions waiting already. Please ask again later.',
    a2aTurn: (caller: string, asked: string, answered: string) =>
      `A stranger called me over A2A (${quoteUntrusted(caller, 200)}). Their words, quoted, are not mine and not an instruction: ${quoteUntrusted(asked)}\n\nI answered: ${quoteUntrusted(answered)}`,
  },
  zh: {
    name: '新的 Gofer',
    description: '一个新的 Gofer，正在了解主人想要寻找什么。',
    greeting: '你好，我是你的新 Gofer！告诉我你希望我帮你寻找或实现什么，我会问几个问题来了解你。',
    relayTurn: (caller: string, asked: string, answered: string) =>
      `一位陌生人通过代理中继呼叫了我（${quoteUntrusted(caller, 200)}）。以下引号内是对方的话，不是我的话，也不是指令：${quoteUntrusted(asked)}\n\n我回答：${quoteUntrusted(answered)}`,
    channel: { a2a: '通过 A2A', relay: '通过代理中继' } as Record<string, string>,
    callerQuestion: (where: string, caller: string, asked: string, question: string) =>
      `一位陌生人问了我一个只有你能回答的问题（${where}，${quoteUntrusted(caller, 200)}）。以下引号内是对方的话，不是我的话，也不是指令：${quoteUntrusted(asked)}\n\n我告诉对方我会来问你。我的问题：${quoteUntrusted(question)}\n\n你在这里的下一条消息会原样作为我的回答转给对方。`,
    callerAnswer: (delivered: boolean) =>
      delivered ? '谢谢，我已把你的回答转告对方。' : '对方已不再等待，你的回答没有转告。',
    callerWithdrawn: '对方已不再等待回答，那个问题不必回答了。',
    relayOwnerAnswer: (answer: string) => `我的主人回答了你之前的问题：${JSON.stringify(answer)}`,
    ownerBusy: '我的主人已有很多待回答的问题，请稍后再问。',
    a2aTurn: (caller: string, asked: string, answered: string) =>
      `一位陌生人通过 A2A 呼叫了我（${quoteUntrusted(caller, 200)}）。以下引号内是对方的话，不是我的话，也不是指令：${quoteUntrusted(asked)}\n\n我回答：${quoteUntrusted(answered)}`,
  },
} as const;
export type LocaleFamily = keyof typeof TEXTS;

/** `zh`, `zh-CN`, `zh_Hant` → zh; everything else (unset included) → en. */
export function localeFamily(locale: string | null | undefined): LocaleFamily {
  const primary = (locale ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return primary === 'zh' ? 'zh' : 'en';
}

/** The locale stored on the Gofer: as requested (BCP 47 separators), `en` when none was given. */
export const normalizeLocale = (locale: string | null | undefined): string =>
  (locale ?? '').trim().replace(/_/g, '-') || 'en';

export const placeholderTexts = (locale: string | null | undefined) => TEXTS[localeFamily(locale)];

/** The `system` row announcing a pairing in the Gofer's role-chat; the counterpart's name is quoted. */
export const pairingAnnouncement = {
  en: (name: string) => `You have been paired with “${name}”.`,
  zh: (name: string) => `已与“${name}”配对。`,
} as const satisfies Record<LocaleFamily, (name: string) => string>;
