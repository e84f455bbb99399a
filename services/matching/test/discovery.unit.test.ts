import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PAIRING_CAPS,
  PAIRING_THRESHOLD,
  isRelevant,
  proposalsInLastDay,
  relevance,
  selectPairings,
  tokenize,
  underCaps,
  type PairingLoad,
} from '../src/domain/discovery.ts';
import { hiring, piano, seeker } from './fixtures.ts';

const NOW = '2026-11-29T08:00:00.000Z';
const hoursAgo = (h: number) => new Date(Date.parse(NOW) - h * 3_600_000).toISOString();

describe('tokenize', () => {
  it('lower-cases, drops stop words and meets word forms halfway', () => {
    expect(tokenize('We are hiring Engineers')).toEqual(['engineer', 'hir']);
    expect(tokenize('hire an engineer')).toEqual(['engineer', 'hir']);
    expect(tokenize('Roles and role')).toEqual(['rol']);
  });

  it('splits CJK runs into character bigrams, next to Latin words', () => {
    expect(tokenize('远程后端 TypeScript')).toEqual(['typescript', '后端', '程后', '远程']);
    expect(tokenize('猫')).toEqual(['猫']);
  });

  it('is deterministic and sorted, without duplicates', () => {
    expect(tokenize('b a-b b')).toEqual(tokenize('b a-b b'));
    expect(tokenize('node node nodes')).toEqual(['nod']);
  });
});

describe('relevance', () => {
  it('scores a hiring team and a job seeker with complementary needs above the threshold', () => {
    const r = relevance(hiring, seeker);
    expect(isRelevant(r)).toBe(true);
    expect(r.score).toBeGreaterThan(PAIRING_THRESHOLD);
    expect(r.sharedTerms).toEqual(expect.arrayContaining(['backend', 'engineer', 'typescript']));
  });

  it('scores unrelated profiles below the threshold', () => {
    expect(isRelevant(relevance(hiring, piano))).toBe(false);
    expect(isRelevant(relevance(seeker, piano))).toBe(false);
  });

  it('is symmetric', () => {
    for (const [x, y] of [
      [hiring, seeker],
      [seeker, piano],
      [hiring, piano],
    ] as const) {
      const [xy, yx] = [relevance(x, y), relevance(y, x)];
      expect(xy.score).toBe(yx.score);
      expect(xy.sharedTerms).toEqual(yx.sharedTerms);
      expect([xy.xToY, xy.yToX]).toEqual([yx.yToX, yx.xToY]);
    }
  });

  it('needs both directions: one side wanting nothing scores 0', () => {
    expect(relevance(hiring, { ...seeker, demands: [] }).score).toBe(0);
  });

  it('works on Chinese profiles', () => {
    const worker = {
      name: '小王',
      description: '后端工程师，熟悉 TypeScript',
      values: ['远程'],
      demands: ['远程后端工作'],
    };
    const team = {
      name: '团队',
      description: '我们在招聘远程后端工程师',
      values: [],
      demands: ['招聘后端工程师'],
    };
    expect(isRelevant(relevance(worker, team))).toBe(true);
  });
});

describe('pairing-frequency caps', () => {
  const caps = { maxOpenPairings: 2, maxProposalsPerDay: 3 };
  const idle: PairingLoad = { openPairings: 0, proposedAt: [] };

  it('counts proposals of the last 24 hours only', () => {
    expect(proposalsInLastDay([hoursAgo(1), hoursAgo(23), hoursAgo(25)], NOW)).toBe(2);
  });

  it('stops at the open-pairing cap and at the daily cap', () => {
    expect(underCaps(idle, caps, NOW)).toBe(true);
    expect(underCaps({ openPairings: 2, proposedAt: [] }, caps, NOW)).toBe(false);
    expect(
      underCaps({ openPairings: 0, proposedAt: [hoursAgo(1), hoursAgo(2), hoursAgo(3)] }, caps, NOW),
    ).toBe(false);
    expect(
      underCaps({ openPairings: 0, proposedAt: [hoursAgo(30), hoursAgo(40), hoursAgo(50)] }, caps, NOW),
    ).toBe(true);
    expect(DEFAULT_PAIRING_CAPS.maxOpenPairings).toBeGreaterThan(0);
  });

  it('selects the best candidates above the threshold while both sides stay under their caps', () => {
    const candidates = [
      { goferId: 'c-low', score: 0.1 },
      { goferId: 'c-busy', score: 0.9 },
      { goferId: 'c-2', score: 0.5 },
      { goferId: 'c-1', score: 0.5 },
      { goferId: 'c-3', score: 0.3 },
    ];
    const loads = new Map([['c-busy', { openPairings: 2, proposedAt: [] }]]);
    expect(selectPairings(idle, candidates, loads, caps, NOW).map((c) => c.goferId)).toEqual(['c-1', 'c-2']);
    expect(selectPairings({ openPairings: 1, proposedAt: [] }, candidates, loads, caps, NOW)).toHaveLength(1);
  });
});
