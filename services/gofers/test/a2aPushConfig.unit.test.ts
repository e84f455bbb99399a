import { describe, expect, it } from 'vitest';
import { loadGofersConfig } from '../src/config.ts';

const env = { JWT_SECRET: 's'.repeat(32) };

describe('the QA switch of A2A push URLs', () => {
  it('is off unless set, and on when set outside production', () => {
    expect(loadGofersConfig(env).GOFER_A2A_PUSH_ALLOW_LOOPBACK).toBe(false);
    expect(
      loadGofersConfig({ ...env, GOFER_A2A_PUSH_ALLOW_LOOPBACK: 'true' }).GOFER_A2A_PUSH_ALLOW_LOOPBACK,
    ).toBe(true);
  });

  it('stops the process from starting in production', () => {
    expect(() =>
      loadGofersConfig({ ...env, GOFER_A2A_PUSH_ALLOW_LOOPBACK: 'true', NODE_ENV: 'production' }),
    ).toThrow(/GOFER_A2A_PUSH_ALLOW_LOOPBACK/);
  });
});
