import type { MatchRecommendation } from '@oan/domain';

/** Every sentence of the scripted session and its cards, per language (en, zh). */
export interface SessionTexts {
  intro(self: string, description: string): string;
  greetBack(counterpart: string, self: string, description: string): string;
  wants(demands: string, counterpartSaid: string): string;
  overlap(items: string): string;
  noOverlap: string;
  values(values: string): string;
  closing: string;
  nothing: string;
  label: Record<MatchRecommendation, string>;
  title(counterpart: string, label: string): string;
  summary(self: string, counterpart: string, turns: number): string;
  offers(description: string): string;
  valuesHighlight(value: string): string;
  looksFor(demand: string): string;
  action: Record<MatchRecommendation, (counterpart: string) => string>;
  theyWant(demand: string): string;
  reasonMine(items: string): string;
  reasonTheirs(items: string): string;
  reasonNone: string;
  list(items: string[]): string;
}

const en: SessionTexts = {
  intro: (s, d) => `Hello, I'm ${s}. ${d}`,
  greetBack: (c, s, d) => `Hello ${c}, I'm ${s}. ${d}`,
  wants: (d, said) => `I'm looking for: ${d}. Your profile says: ${said}.`,
  overlap: (items) => `That fits what I asked for: ${items}.`,
  noOverlap: "I don't see a direct fit with what I asked for yet.",
  values: (v) => `What matters to me: ${v}.`,
  closing: "Thanks, I'll report back to my owner.",
  nothing: '(nothing stated)',
  label: { strong: 'strong match', possible: 'possible match', weak: 'weak match' },
  title: (c, l) => `${c}: ${l}`,
  summary: (s, c, n) => `${s} talked with ${c} for ${n} turns.`,
  offers: (d) => `Offers: ${d}`,
  valuesHighlight: (v) => `Values: ${v}`,
  looksFor: (d) => `Looking for: ${d}`,
  action: {
    strong: (c) => `Request a match with ${c} to open a direct conversation.`,
    possible: (c) => `Review ${c}'s profile and decide whether to request a match.`,
    weak: () => 'No action needed; discovery keeps looking.',
  },
  theyWant: (d) => `They are looking for ${d}, which you offer.`,
  reasonMine: (items) => `They offer what you look for: ${items}.`,
  reasonTheirs: (items) => `They look for what you offer: ${items}.`,
  reasonNone: 'Little overlap between what each side looks for and offers.',
  list: (items) => items.join(', '),
};

const zh: SessionTexts = {
  intro: (s, d) => `你好，我是${s}。${d}`,
  greetBack: (c, s, d) => `你好 ${c}，我是${s}。${d}`,
  wants: (d, said) => `我在寻找：${d}。你的资料写道：${said}。`,
  overlap: (items) => `这与我的需求相符：${items}。`,
  noOverlap: '目前还没有看到与我的需求直接相符的地方。',
  values: (v) => `我看重的是：${v}。`,
  closing: '谢谢，我会向我的主人汇报。',
  nothing: '（未说明）',
  label: { strong: '高度匹配', possible: '可能匹配', weak: '匹配度低' },
  title: (c, l) => `${c}：${l}`,
  summary: (s, c, n) => `${s} 与 ${c} 交流了 ${n} 轮。`,
  offers: (d) => `提供：${d}`,
  valuesHighlight: (v) => `看重：${v}`,
  looksFor: (d) => `寻找：${d}`,
  action: {
    strong: (c) => `向 ${c} 发起匹配请求，开启直接对话。`,
    possible: (c) => `查看 ${c} 的资料，再决定是否发起匹配请求。`,
    weak: () => '无需操作，系统会继续寻找。',
  },
  theyWant: (d) => `对方在寻找${d}，这正是你能提供的。`,
  reasonMine: (items) => `对方提供你在寻找的：${items}。`,
  reasonTheirs: (items) => `对方在寻找你能提供的：${items}。`,
  reasonNone: '双方的需求与提供之间重合不多。',
  list: (items) => items.join('、'),
};

/** A side speaks Chinese when its own profile is written in it (a public profile carries no locale). */
export function textsFor(ownText: string): SessionTexts {
  return /\p{Script=Han}/u.test(ownText) ? zh : en;
}

/** Counterpart text is data: one line, bounded, inside quotes it cannot close. */
export function quote(text: string, max = 200): string {
  const flat = text
    .replace(/\s+/gu, ' ')
    .replace(/["“”«»]/gu, "'")
    .trim();
  const chars = [...flat];
  return `“${chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : flat}”`;
}
