/** A directory entry as FIND ranks it. */
export interface Listed {
  address: string;
  summary: string;
  endpoints: string[];
  lastSeen: number;
}

const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

/**
 * Seed 001's FIND: the top `n` agents by relevance of their summary to the query, the recently
 * active first among equals. Relevance is the share of the query's words the summary contains (the
 * seed's "semantic similarity" cannot be observed by any client); agents sharing no word
 * are not listed.
 */
export function rankAgents(query: string, agents: Listed[], n = 10): Listed[] {
  const q = words(query);
  if (q.size === 0) return [];
  return agents
    .map((a) => {
      const s = words(a.summary);
      let hits = 0;
      for (const w of q) if (s.has(w)) hits++;
      return { a, score: hits / q.size };
    })
    .filter((x) => x.score > 0)
    .sort((x, y) => y.score - x.score || y.a.lastSeen - x.a.lastSeen)
    .slice(0, n)
    .map((x) => x.a);
}
