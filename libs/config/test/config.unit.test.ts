import { describe, expect, it } from 'vitest';
import { ConfigError, commonEnv, loadConfig } from '../src/index.ts';

const base = { JWT_SECRET: 'x'.repeat(32) };

describe('loadConfig', () => {
  it('applies defaults for a minimal environment', () => {
    const cfg = loadConfig(commonEnv, base);
    expect(cfg.ENABLE_OPEN_API).toBe(false);
    expect(cfg.KAFKA_BROKERS).toEqual(['127.0.0.1:9092']);
  });

  it('names the bad variable and never echoes its value', () => {
    const run = () => loadConfig(commonEnv, { ...base, REDIS_URL: 'not a url secret123' });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(/REDIS_URL/);
    expect(run).not.toThrow(/secret123/);
  });

  it('fails fast on a missing required variable', () => {
    expect(() => loadConfig(commonEnv, {})).toThrow(/JWT_SECRET/);
  });

  it('reads ENABLE_OPEN_API=true as on and anything else as off', () => {
    expect(loadConfig(commonEnv, { ...base, ENABLE_OPEN_API: 'true' }).ENABLE_OPEN_API).toBe(true);
    expect(loadConfig(commonEnv, { ...base, ENABLE_OPEN_API: 'no' }).ENABLE_OPEN_API).toBe(false);
  });

  it('splits KAFKA_BROKERS and trims a trailing slash from OAN_WEB_BASE_URL', () => {
    const cfg = loadConfig(commonEnv, {
      ...base,
      KAFKA_BROKERS: 'a:1, b:2',
      OAN_WEB_BASE_URL: 'https://x.io/',
    });
    expect(cfg.KAFKA_BROKERS).toEqual(['a:1', 'b:2']);
    expect(cfg.OAN_WEB_BASE_URL).toBe('https://x.io');
  });

  it('reads an empty OAN_WEB_BASE_URL as unset and refuses a relative or non-http one', () => {
    for (const empty of ['', '  ']) {
      const cfg = loadConfig(commonEnv, { ...base, OAN_WEB_BASE_URL: empty });
      expect(cfg.OAN_WEB_BASE_URL).toBeUndefined();
    }
    for (const bad of ['/web', 'oan.example.com', 'ftp://oan.example.com']) {
      expect(() => loadConfig(commonEnv, { ...base, OAN_WEB_BASE_URL: bad })).toThrow(/OAN_WEB_BASE_URL/);
    }
  });
});

describe('KAFKA_BROKER_ROUTES', () => {
  it('is no routes when unset or empty', () => {
    expect(loadConfig(commonEnv, base).KAFKA_BROKER_ROUTES).toEqual({});
    expect(loadConfig(commonEnv, { ...base, KAFKA_BROKER_ROUTES: ' ' }).KAFKA_BROKER_ROUTES).toEqual({});
  });

  it('maps each advertised host:port to the address to dial instead', () => {
    const cfg = loadConfig(commonEnv, {
      ...base,
      KAFKA_BROKER_ROUTES: '127.0.0.1:9092=127.0.0.1:19092, kafka-1:9093 = 10.0.0.7:29093,',
    });
    expect(cfg.KAFKA_BROKER_ROUTES).toEqual({
      '127.0.0.1:9092': '127.0.0.1:19092',
      'kafka-1:9093': '10.0.0.7:29093',
    });
  });

  it.each(['127.0.0.1:9092', '127.0.0.1=127.0.0.1:1', '127.0.0.1:9092=x', 'a:1=b:2=c:3', 'a:port=b:2'])(
    'refuses "%s"',
    (routes) => {
      expect(() => loadConfig(commonEnv, { ...base, KAFKA_BROKER_ROUTES: routes })).toThrow(
        /KAFKA_BROKER_ROUTES/,
      );
    },
  );
});
