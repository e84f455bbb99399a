import type { PublicProfile } from '../types.ts';

/** Every sentence the scripted brain says, per language. Questions double as its interview markers. */
export interface Texts {
  askDemands: string;
  askDescription: string;
  askValues: string;
  /** Ends the profile summary; the pending query that precedes `ready_for_pairing`. */
  askStart: string;
  /** The fixed tail of a human-review question (the trigger is quoted before it). */
  reviewTail: string;
  review(trigger: string): string;
  goal(demand: string): string;
  named(name: string): string;
  thanks: string;
  summary(p: PublicProfile): string;
  reviewYes: string;
  reviewNo: string;
  yesOrNo: string;
  started: string;
  notYet: string;
  noted: string;
  gotAttachment: string;
  fact(fact: string): string;
}

const en: Texts = {
  askDemands: 'What would you like me to find for you?',
  askDescription: 'Tell me a little about yourself: who are you, and what do you offer?',
  askValues: 'What matters most to you in a match? A few short points are enough.',
  askStart: 'Shall I start looking for matches?',
  reviewTail: 'before going ahead. May I use what you just told me?',
  review: (t) => `You asked me to check with you about “${t}” ${en.reviewTail}`,
  goal: (d) => `Got it: I'll look for ${d}.`,
  named: (n) => `You can call me ${n}.`,
  thanks: 'Thank you.',
  summary: (p) =>
    [
      "Here is the profile I'll show to others:",
      `• Name: ${p.name}`,
      `• Looking for: ${p.demands.join('; ')}`,
      `• About you: ${p.description}`,
      `• What matters: ${p.values.join(', ')}`,
    ].join('\n'),
  reviewYes: "Okay, I'll use it.",
  reviewNo: "Understood, I'll leave that out.",
  yesOrNo: 'Please answer yes or no.',
  started: "Great, I'm now looking for matches for you. I'll let you know when I find someone promising.",
  notYet: "No problem, I'll wait. Tell me when you'd like me to start.",
  noted: "Noted. I'm looking for matches that fit your profile.",
  gotAttachment: "Thanks, I've got it.",
  fact: (f) => `From your documents: “${f}”`,
};

const zh: Texts = {
  askDemands: '你希望我帮你找什么？',
  askDescription: '请简单介绍一下你自己：你是谁，能提供什么？',
  askValues: '在匹配中你最看重什么？简单列几点就好。',
  askStart: '要我开始为你寻找匹配吗？',
  reviewTail: '需要先和你确认。我可以使用你刚才告诉我的内容吗？',
  review: (t) => `你要求涉及“${t}”的内容${zh.reviewTail}`,
  goal: (d) => `明白了：我会帮你找${d}。`,
  named: (n) => `你可以叫我${n}。`,
  thanks: '谢谢。',
  summary: (p) =>
    [
      '这是我将向他人展示的资料：',
      `• 名字：${p.name}`,
      `• 寻找：${p.demands.join('；')}`,
      `• 关于你：${p.description}`,
      `• 看重：${p.values.join('、')}`,
    ].join('\n'),
  reviewYes: '好的，我会使用这部分内容。',
  reviewNo: '明白，我不会使用这部分内容。',
  yesOrNo: '请回答“是”或“否”。',
  started: '太好了，我现在开始为你寻找匹配，找到合适的人会告诉你。',
  notYet: '没问题，我先等等。你准备好了就告诉我。',
  noted: '收到。我正在寻找符合你资料的匹配。',
  gotAttachment: '收到，谢谢。',
  fact: (f) => `根据你的文档：“${f}”`,
};

export const TEXTS = { en, zh } as const;

export const textsFor = (locale: string): Texts => (locale.toLowerCase().startsWith('zh') ? zh : en);
