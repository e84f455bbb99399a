/** Reading the owner's answers: pure string functions, en and zh. */

const YES = [
  'yes',
  'y',
  'yeah',
  'yep',
  'ok',
  'okay',
  'sure',
  'go',
  'go ahead',
  'start',
  'please do',
  'of course',
  'absolutely',
  'approved',
  'agree',
];
const NO = ['no', 'n', 'nope', 'not yet', 'later', 'wait', "don't", 'do not', 'stop', 'cancel'];
const ZH_YES = ['是', '好', '可以', '行', '对', '嗯', '开始', '同意', '当然', '没问题'];
const ZH_NO = ['不', '否', '别', '先不', '暂不', '等等', '等一下', '还没'];

/** A bare yes/no reply (what a `boolean` response constraint asks for), tolerant of punctuation and a few trailing words. */
export function yesNo(text: string): 'yes' | 'no' | null {
  const t = text
    .trim()
    .toLowerCase()
    .replace(/[.!。！~]+$/u, '');
  if (t.length === 0) return null;
  // zh first: its "no" words are prefixes (不要, 先不用), its "yes" words can follow them (不好).
  if (ZH_NO.some((w) => t.startsWith(w))) return 'no';
  if (ZH_YES.some((w) => t.startsWith(w))) return 'yes';
  const starts = (w: string) => t.startsWith(w) && !/[\p{L}\p{N}]/u.test(t.charAt(w.length));
  if (NO.some(starts)) return 'no';
  if (YES.some(starts)) return 'yes';
  return null;
}

const NAME_PATTERNS = [
  /\b(?:call you|call yourself|your name is|name you|name:)\s*["“'‘]?([^"”'’\n.,!?;:]{1,40})/gi,
  /(?:叫你|你就叫|你的名字是|名字[:：]|名字叫)\s*["“'‘]?([^"”'’\n，。！？；,.!?;:：]{1,20})/gu,
];

/** An explicit name anywhere in the text ("call you X", "name: X", "叫你X"); the last one wins. */
export function explicitName(text: string): string | null {
  return nameClause(text)?.name ?? null;
}

/** The text without its naming clause, so "name: Bolt; honesty" fills values with "honesty" only. */
export function withoutName(text: string): string {
  const clause = nameClause(text);
  return clause ? (text.slice(0, clause.at) + text.slice(clause.end)).trim() : text;
}

function nameClause(text: string): { at: number; end: number; name: string } | null {
  let found: { at: number; end: number; name: string } | null = null;
  for (const re of NAME_PATTERNS) {
    for (const m of text.matchAll(re)) {
      const name = (m[1] ?? '').trim().replace(/[吧啊呀哦嘛呢]+$/u, '');
      if (name && (!found || m.index > found.at)) {
        found = { at: m.index, end: m.index + m[0].length, name: clip(name, 40) };
      }
    }
  }
  return found;
}

const EN_LEAD =
  /^(?:(?:please|hi|hello|hey)\b[,!]?\s*)*(?:(?:can you |could you )?help me (?:to )?)?(?:(?:i(?:['’]m|['’]d| am)?|we(?: are)?) (?:want|need|would like|like|looking|hope)(?: to)?\s+)?(?:(?:find|hire|meet|get|search for|look for|looking for|seeking|recruit)\b\s*)?(?:me\s+)?(?:for\s+)?/i;
const EN_ARTICLE = /^(?:a|an|the|some|my|our|someone|somebody|people|person)\s+/i;
const EN_STOP = new Set([
  'for',
  'to',
  'in',
  'with',
  'who',
  'that',
  'which',
  'at',
  'on',
  'from',
  'and',
  'near',
  'of',
  'like',
]);

const ZH_LEAD =
  /^(?:你好|您好)?[，,]?(?:请)?(?:帮我|为我)?(?:我)?(?:想|要|需要|希望)?(?:找|寻找|招聘|认识|物色)(?:到)?/u;

/** The goal without its lead-in: "I'm looking for a co-founder…" → "a co-founder…". */
export function goalText(goal: string, zh: boolean): string {
  const text = goal.trim();
  const rest = text.replace(zh ? ZH_LEAD : EN_LEAD, '').trim();
  return rest || text;
}

/** A name made from the goal: "Find me a co-founder for my startup" → "Co-Founder Scout". */
export function nameFromGoal(goal: string, zh: boolean): string {
  if (zh) {
    const rest = goalText(goal, zh).replace(/^(?:一个|一位|一名|一些|个|位|名)/u, '');
    const clause = rest.split(/[，。！？；,.!?;\s]/u)[0] ?? '';
    // "会做饭的阿姨": the noun comes after the last 的.
    const core = (clause.split('的').pop() ?? '').slice(0, 8);
    return core ? `${core}寻访员` : '寻访员';
  }
  let rest = goalText(goal, zh);
  while (EN_ARTICLE.test(rest)) rest = rest.replace(EN_ARTICLE, '');
  const words: string[] = [];
  for (const w of rest.split(/\s+/)) {
    const word = w.replace(/[^\p{L}\p{N}'-]/gu, '');
    if (!word || EN_STOP.has(word.toLowerCase()) || words.length === 3) break;
    words.push(word);
    if (/[,.;:!?]$/.test(w)) break;
  }
  const title = words.map((w) =>
    w.replace(/(^|-)(\p{L})/gu, (_m, d: string, c: string) => d + c.toUpperCase()),
  );
  return title.length > 0 ? `${title.join(' ')} Scout` : 'Scout';
}

/** "honesty, speed and a sense of humour" → ['honesty', 'speed', 'a sense of humour']. */
export function splitItems(text: string, max = 8): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of text.split(/[,;，；、\n]|\band\b|以及|和/u)) {
    const item = clip(
      raw
        .trim()
        .replace(/^[-•*\d.)\s]+/u, '')
        .replace(/[.。!！]+$/u, '')
        .trim(),
      80,
    );
    if (!item || seen.has(item.toLowerCase())) continue;
    seen.add(item.toLowerCase());
    out.push(item);
    if (out.length === max) break;
  }
  return out;
}

/** Demands keep their commas (a goal is a sentence); separate lines or semicolons make separate ones. */
export function splitDemands(text: string): string[] {
  return text
    .split(/[;\n；]/u)
    .map((s) => clip(s.trim().replace(/[.。]+$/u, ''), 300))
    .filter(Boolean)
    .slice(0, 5);
}

/** The first human-review trigger the text contains (case-insensitive substring). */
export function matchTrigger(text: string, triggers: string[]): string | null {
  const t = text.toLowerCase();
  return triggers.find((trigger) => trigger.trim() && t.includes(trigger.trim().toLowerCase())) ?? null;
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}
