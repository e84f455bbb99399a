import { describe, expect, it } from 'vitest';
import { a2aSweepIntervalMs, loadGofersConfig } from '../src/config.ts';

const env = { JWT_SECRET: 's'.repeat(32) };

describe('the A2A recovery sweep settings', () => {
  it('waits two minutes for a turn by default and sweeps every quarter of that', () => {
    const config = loadGofersConfig(env);
    expect(config.GOFER_A2A_STALE_SECONDS).toBe(120);
    expect(a2aSweepIntervalMs(config)).toBe(30_000);
    expect(a2aSweepIntervalMs({ GOFER_A2A_STALE_SECONDS: 1 })).toBe(500);
  });
});

describe('the QA switches of A2A turns', () => {
  it('are off unless set', () => {
    const config = loadGofersConfig(env);
    expect(config.GOFER_A2A_QA_TURN_DELAY_MS).toBe(0);
    expect(config.GOFER_A2A_QA_FAULT).toBeUndefined();
    expect(loadGofersConfig({ ...env, GOFER_A2A_QA_FAULT: '' }).GOFER_A2A_QA_FAULT).toBeUndefined();
  });

  it('stop the process from starting in production', () => {
    const prod = { ...env, NODE_ENV: 'production' };
    expect(() => loadGofersConfig({ ...prod, GOFER_A2A_QA_TURN_DELAY_MS: '100' })).toThrow(
      /GOFER_A2A_QA_TURN_DELAY_MS/,
    );
    expect(() => loadGofersConfig({ ...prod, GOFER_A2A_QA_FAULT: 'exit-after-record' })).toThrow(
      /GOFER_A2A_QA_FAULT/,
    );
    expect(loadGofersConfig(prod).GOFER_A2A_QA_FAULT).toBeUndefined();
  });
});
