import { describe, expect, it } from 'vitest';
import { databaseAway } from '../src/index.ts';

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('databaseAway', () => {
  it('is true of a socket that was refused, reset or not resolved, and of a server shutting down or starting', () => {
    for (const code of [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EAI_AGAIN',
      'ENOTFOUND',
      '57P01',
      '57P03',
      '08006',
    ])
      expect(databaseAway(coded(code)), code).toBe(true);
    expect(databaseAway(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it('looks into causes and into the attempts of an AggregateError (a name with several addresses)', () => {
    expect(databaseAway(new Error('open failed', { cause: coded('ECONNREFUSED') }))).toBe(true);
    expect(databaseAway(new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], ''))).toBe(true);
  });

  it('is false of a server that answered and refused, and of anything else', () => {
    for (const err of [
      coded('28000', 'role "x" does not exist'),
      coded('3D000', 'database "x" does not exist'),
      coded('42P01', 'relation does not exist'),
      new TypeError('x is not a function'),
      'ECONNREFUSED',
      undefined,
    ])
      expect(databaseAway(err)).toBe(false);
  });
});
