import { describe, expect, it } from 'vitest';
import { autoGatewayId, loadGatewayConfig } from '../src/config.ts';

const env = { JWT_SECRET: 'x'.repeat(32) };

describe('GATEWAY_ID', () => {
  it("auto: the host name (a compose container's id, unique per --scale replica), sid-safe", () => {
    expect(autoGatewayId('3f2a9c1be4d7')).toBe('3f2a9c1be4d7');
    expect(autoGatewayId('gw-1.example.com')).toBe('gw-1examplecom');
    expect(autoGatewayId('...')).toBe('g1');
    expect(loadGatewayConfig({ ...env, GATEWAY_ID: 'auto' }).GATEWAY_ID).toBe(autoGatewayId());
  });

  it('takes an explicit id as it is and refuses one that cannot prefix a sid', () => {
    expect(loadGatewayConfig({ ...env, GATEWAY_ID: 'g2' }).GATEWAY_ID).toBe('g2');
    expect(loadGatewayConfig(env).GATEWAY_ID).toBe('g1');
    expect(() => loadGatewayConfig({ ...env, GATEWAY_ID: 'a.b' })).toThrow(/GATEWAY_ID/);
  });
});
