import { describe, expect, it } from 'vitest';
import { ConfigError } from '@oan/config';
import { loadProjectorConfig } from '../src/config.ts';

describe('the projector configuration', () => {
  it('creates topics of one partition unless told how many, from 1 to 256', () => {
    expect(loadProjectorConfig({}).KAFKA_TOPIC_PARTITIONS).toBe(1);
    expect(loadProjectorConfig({ KAFKA_TOPIC_PARTITIONS: '4' }).KAFKA_TOPIC_PARTITIONS).toBe(4);
    for (const bad of ['0', '-1', '2.5', 'four', '257'])
      expect(() => loadProjectorConfig({ KAFKA_TOPIC_PARTITIONS: bad }), bad).toThrow(
        /KAFKA_TOPIC_PARTITIONS/,
      );
  });

  it('holds no batch unless a test asks, and refuses the hold in production, naming it', () => {
    expect(loadProjectorConfig({}).PROJECTOR_QA_HOLD_MS).toBe(0);
    const held = loadProjectorConfig({ PROJECTOR_QA_HOLD_MS: '500', PROJECTOR_QA_HOLD_AT: 'apply' });
    expect([held.PROJECTOR_QA_HOLD_MS, held.PROJECTOR_QA_HOLD_AT]).toEqual([500, 'apply']);
    expect(() => loadProjectorConfig({ PROJECTOR_QA_HOLD_AT: 'later' })).toThrow(ConfigError);
    expect(() => loadProjectorConfig({ NODE_ENV: 'production', PROJECTOR_QA_HOLD_MS: '500' })).toThrow(
      /PROJECTOR_QA_HOLD_MS: must not be set in production/,
    );
  });
});
