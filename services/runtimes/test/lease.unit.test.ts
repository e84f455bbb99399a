import { describe, expect, it } from 'vitest';
import { claim, claimable, finish, holds, type JobLease } from '../src/domain/lease.ts';
import { normalizePolicy, samePolicy, wants } from '../src/domain/policy.ts';

const t0 = new Date('2026-01-01T00:00:00Z');
const at = (s: number) => new Date(t0.getTime() + s * 1000);
const queued: JobLease = { state: 'queued', attempts: 0, leaseOwner: null, version: 0, leaseUntil: null };
const policy = { maxAttempts: 3, leaseSeconds: 60 };

describe('a queued job, when claimed', () => {
  it('gets a lease, a new version and an attempt', () => {
    expect(claim(queued, 'w1', t0, policy)).toEqual({
      state: 'leased',
      attempts: 1,
      leaseOwner: 'w1',
      version: 1,
      leaseUntil: at(60),
    });
  });
});

describe('a leased job', () => {
  const leased = claim(queued, 'w1', t0, policy);
  it('is held by its owner and version only, until the lease runs out', () => {
    expect(holds(leased, 'w1', 1, at(59))).toBe(true);
    expect(holds(leased, 'w1', 1, at(60))).toBe(false);
    expect(holds(leased, 'w2', 1, at(1))).toBe(false);
    expect(holds(leased, 'w1', 2, at(1))).toBe(false);
  });
  it('is claimable once its lease ran out, with the next version and attempt', () => {
    expect(claimable(leased, at(59))).toBe(false);
    expect(claimable(leased, at(60))).toBe(true);
    expect(claim(leased, 'w2', at(60), policy)).toMatchObject({ attempts: 2, version: 2, leaseOwner: 'w2' });
  });
  it('does not count a release, counts a failure, and is exhausted after the last', () => {
    expect(finish(leased, 'released', 3)).toMatchObject({ state: 'queued', attempts: 0, leaseOwner: null });
    expect(finish(leased, 'failed', 3)).toMatchObject({ state: 'queued', attempts: 1 });
    expect(finish(leased, 'failed', 1)).toMatchObject({ state: 'exhausted', attempts: 1 });
    expect(finish(leased, 'handled', 1)).toMatchObject({ state: 'handled', attempts: 1 });
  });
  it('whose attempts are used up is exhausted instead of handed out again', () => {
    const last = claim(queued, 'w1', t0, { ...policy, maxAttempts: 1 });
    expect(claim(last, 'w2', at(61), { ...policy, maxAttempts: 1 })).toMatchObject({
      state: 'exhausted',
      attempts: 1,
      leaseOwner: null,
    });
  });
});

describe('a policy', () => {
  it('means the same however its lists are written', () => {
    const a = normalizePolicy({ types: ['gofer_question', 'gofer_message'], goferIds: ['b', 'a', 'b'] });
    expect(a).toEqual({
      types: ['gofer_message', 'gofer_question'],
      goferIds: ['a', 'b'],
      maxAttempts: 3,
      leaseSeconds: 60,
      graceSeconds: 300,
    });
    expect(
      samePolicy(
        a,
        normalizePolicy({ types: ['gofer_message', 'gofer_question'], goferIds: ['a', 'b'], maxAttempts: 3 }),
      ),
    ).toBe(true);
    expect(samePolicy(a, normalizePolicy({ types: ['gofer_message', 'gofer_question'] }))).toBe(false);
    // a policy stored before the grace existed means the one with the default grace
    const { graceSeconds: _grace, ...stored } = a;
    expect(samePolicy(stored as typeof a, a)).toBe(true);
    expect(samePolicy(stored as typeof a, { ...a, graceSeconds: 60 })).toBe(false);
  });
  it('wants a decision of its types and Gofers that carries a reply', () => {
    const p = normalizePolicy({ types: ['match_request'], goferIds: ['g1'] });
    expect(wants(p, { type: 'match_request', goferId: 'g1', hasReply: true })).toBe(true);
    expect(wants(p, { type: 'match_request', goferId: 'g1', hasReply: false })).toBe(false);
    expect(wants(p, { type: 'match_request', goferId: 'g2', hasReply: true })).toBe(false);
    expect(wants(p, { type: 'relay_message', hasReply: true })).toBe(false);
    expect(
      wants(normalizePolicy({ types: ['relay_message'] }), { type: 'relay_message', hasReply: true }),
    ).toBe(true);
  });
});
