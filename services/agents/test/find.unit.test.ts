import { describe, expect, it } from 'vitest';
import { rankAgents, type Listed } from '../src/domain/find.ts';

const agent = (n: number, summary: string, lastSeen: number): Listed => ({
  address: `0x${String(n).padStart(64, '0')}`,
  summary,
  endpoints: [],
  lastSeen,
});

describe("seed 001's FIND", () => {
  it('ranks by the share of query words in the summary, recently active first among equals, top 10', () => {
    const agents = [
      agent(1, 'I translate text between languages', 100),
      agent(2, 'Translate text to Spanish and French', 50),
      agent(3, 'weather forecasts', 300),
      agent(4, 'translates text to spanish', 200),
      ...Array.from({ length: 12 }, (_, i) => agent(10 + i, 'text tools', i)),
    ];
    const found = rankAgents('translate text to spanish', agents);
    expect(found).toHaveLength(10);
    expect(found.slice(0, 3).map((a) => a.address.slice(-1))).toEqual(['2', '4', '1']);
    expect(found.some((a) => a.summary === 'weather forecasts')).toBe(false);
  });

  it('finds nothing for an empty query', () => {
    expect(rankAgents('  ', [agent(1, 'anything', 1)])).toEqual([]);
  });
});
