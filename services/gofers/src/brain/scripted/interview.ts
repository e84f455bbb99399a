import type { HistoryItem } from '../types.ts';
import { TEXTS } from './texts.ts';

/**
 * Where the interview stands, read back from the chat itself: the scripted brain keeps no state of
 * its own, so a replayed or redelivered message gets the same answer (same input ⇒ same output).
 * Its own questions are the markers; the order is fixed: demands → description → values → start.
 */
export type Slot = 'demands' | 'description' | 'values';
export type Step = Slot | 'start' | 'review';

const SLOTS: Slot[] = ['demands', 'description', 'values'];

/** Which question an assistant turn asked, in either language; null for any other text. */
export function stepOf(content: string): Step | null {
  for (const t of [TEXTS.en, TEXTS.zh]) {
    if (content.includes(t.reviewTail)) return 'review';
    if (content.includes(t.askStart)) return 'start';
  }
  for (const t of [TEXTS.en, TEXTS.zh]) {
    if (content.includes(t.askValues)) return 'values';
    if (content.includes(t.askDescription)) return 'description';
    if (content.includes(t.askDemands)) return 'demands';
  }
  return null;
}

/** The question asked by the last assistant turn before `index` (exclusive). */
export function askedBefore(history: HistoryItem[], index: number): Step | null {
  for (let i = index - 1; i >= 0; i--) {
    const item = history[i]!;
    if (item.role === 'assistant') return stepOf(item.content);
  }
  return null;
}

/** The description question is only asked once demands exist, values only once it was answered. */
export function descriptionAnswered(history: HistoryItem[]): boolean {
  return history.some((h) => {
    if (h.role !== 'assistant') return false;
    const step = stepOf(h.content);
    return step === 'values' || step === 'start';
  });
}

/** The slot still open, in interview order; null once the profile is complete. */
export function firstMissing(p: { demands: string[]; values: string[] }, described: boolean): Slot | null {
  const missing: Record<Slot, boolean> = {
    demands: p.demands.length === 0,
    description: !described,
    values: p.values.length === 0,
  };
  return SLOTS.find((s) => missing[s]) ?? null;
}

/** The last user message before `index` and its position (the one a review question held back). */
export function lastUserBefore(
  history: HistoryItem[],
  index: number,
): { at: number; content: string } | null {
  for (let i = index - 1; i >= 0; i--) {
    const item = history[i]!;
    if (item.role === 'user') return { at: i, content: item.content };
  }
  return null;
}

export const isSlot = (s: Step | null): s is Slot => s !== null && (SLOTS as string[]).includes(s);
