import { clip } from './parse.ts';

/** Answering from the owner's documents: a line-level word-overlap lookup, en and zh. */

export function isQuestion(text: string): boolean {
  return (
    /[?？]/u.test(text) ||
    /^(?:what|who|where|when|how|which|why|do|does|did|is|are|can|could|tell me)\b/i.test(text.trim()) ||
    /吗|什么|哪|多少|怎么|几/u.test(text)
  );
}

const STOP = new Set([
  'the',
  'and',
  'for',
  'you',
  'your',
  'what',
  'who',
  'where',
  'when',
  'how',
  'which',
  'does',
  'did',
  'are',
  'was',
  'our',
  'my',
  'tell',
  'about',
  'this',
  'that',
  'with',
  'from',
  'have',
]);

function tokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (/\p{Script=Han}/u.test(w)) {
      // Chinese has no spaces: character bigrams stand in for words.
      for (let i = 0; i + 1 < w.length; i++) out.add(w.slice(i, i + 2));
    } else if (w.length >= 3 && !STOP.has(w)) out.add(w);
  }
  return out;
}

/** The line of the documents that shares the most words with the question, if any shares one. */
export function findFact(question: string, knowledge: string[]): string | null {
  const asked = tokens(question);
  let best: { score: number; line: string } | null = null;
  for (const doc of knowledge) {
    for (const line of doc.split(/\r?\n|(?<=[.!?。！？])\s+/u)) {
      const text = line.trim();
      if (!text) continue;
      let score = 0;
      for (const t of tokens(text)) if (asked.has(t)) score += 1;
      if (score > 0 && (!best || score > best.score)) best = { score, line: text };
    }
  }
  return best ? clip(best.line, 300) : null;
}
