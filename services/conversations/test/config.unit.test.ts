import { describe, expect, it } from 'vitest';
import { ConfigError } from '@oan/config';
import { loadConversationsConfig } from '../src/config.ts';

const base = { JWT_SECRET: 's'.repeat(32) };

describe('the conversations configuration', () => {
  it('keeps the real clock unless the QA clock is asked for', () => {
    expect(loadConversationsConfig(base).CONVERSATIONS_QA_CLOCK).toBeUndefined();
    expect(
      loadConversationsConfig({ ...base, CONVERSATIONS_QA_CLOCK: '' }).CONVERSATIONS_QA_CLOCK,
    ).toBeUndefined();
    expect(loadConversationsConfig({ ...base, CONVERSATIONS_QA_CLOCK: 'redis' }).CONVERSATIONS_QA_CLOCK).toBe(
      'redis',
    );
    expect(() => loadConversationsConfig({ ...base, CONVERSATIONS_QA_CLOCK: 'env' })).toThrow(ConfigError);
  });

  it('refuses the QA clock in production, naming it', () => {
    const production = { ...base, NODE_ENV: 'production' };
    expect(loadConversationsConfig(production).CONVERSATIONS_QA_CLOCK).toBeUndefined();
    expect(() => loadConversationsConfig({ ...production, CONVERSATIONS_QA_CLOCK: 'redis' })).toThrow(
      /CONVERSATIONS_QA_CLOCK: must not be set in production/,
    );
  });
});
