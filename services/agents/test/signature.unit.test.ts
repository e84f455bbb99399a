import { createPrivateKey, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseAnnounce } from '../src/domain/announce.ts';
import { ANNOUNCE_STYLE, canonicalJson, COMMAND_STYLE } from '@oan/protocol';
import { verifyBy } from '../src/infra/signature.ts';

// The ConnectOnion relay spec's worked example: seed = 32 zero bytes, ts = 1700000000.
const ADDRESS = '0x3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29';
const TS = 1700000000;
const ANNOUNCE_SIG =
  '069587fe909684688ac57a73f975fb3950bcd48b29658e83768849c28441df9ca2fc5a2735a21b26b4ab4120a7250dc4a4e58d86b0759a5f4f5ec69421fbb600';
const CONNECT_SIG =
  '3671dcdddca8c2bb04309d0d397de909e8cd9820ff50a14df46377ded4bd09ca31e4955c258c60c6ff283e74fa798be1811e0aa5623616aa29661854f674c500';
const zeroKey = createPrivateKey({
  key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32)]),
  format: 'der',
  type: 'pkcs8',
});
const announce = {
  type: 'ANNOUNCE',
  address: ADDRESS,
  timestamp: TS,
  summary: 'echo agent',
  endpoints: [],
  relay: null,
};

describe('the canonical forms of the reference worked example', () => {
  it('serializes ANNOUNCE with spaced separators and sorted keys, and the seed signs it as the reference says', () => {
    const text = canonicalJson(announce, ANNOUNCE_STYLE);
    expect(text).toBe(
      `{"address": "${ADDRESS}", "endpoints": [], "relay": null, "summary": "echo agent", "timestamp": 1700000000, "type": "ANNOUNCE"}`,
    );
    expect(sign(null, Buffer.from(text), zeroKey).toString('hex')).toBe(ANNOUNCE_SIG);
    expect(verifyBy(ADDRESS, text, ANNOUNCE_SIG)).toBe(true);
  });

  it('serializes a CONNECT payload compactly', () => {
    const text = canonicalJson({ to: ADDRESS, timestamp: TS, signed_commands: 1 }, COMMAND_STYLE);
    expect(text).toBe(`{"signed_commands":1,"timestamp":1700000000,"to":"${ADDRESS}"}`);
    expect(verifyBy(ADDRESS, text, CONNECT_SIG)).toBe(true);
  });

  it('escapes every character outside printable ASCII as lowercase \\uXXXX, astral ones as surrogate pairs', () => {
    expect(canonicalJson('café ✓', ANNOUNCE_STYLE)).toBe('"caf\\u00e9 \\u2713"');
    expect(canonicalJson('a/b "q" \n 😀', ANNOUNCE_STYLE)).toBe('"a/b \\"q\\" \\n \\ud83d\\ude00"');
    expect(canonicalJson({ b: { d: 1, c: [true, null] }, a: 'x' }, ANNOUNCE_STYLE)).toBe(
      '{"a": "x", "b": {"c": [true, null], "d": 1}}',
    );
  });
});

describe('an ANNOUNCE frame', () => {
  const frame = { ...announce, signature: ANNOUNCE_SIG };

  it('verifies as sent, and with a 0x-prefixed signature (seed 001 form)', () => {
    for (const signature of [ANNOUNCE_SIG, `0x${ANNOUNCE_SIG}`]) {
      const parsed = parseAnnounce({ ...frame, signature }, TS);
      expect(parsed.ok).toBe(true);
      if (parsed.ok) expect(verifyBy(ADDRESS, parsed.value.signed, parsed.value.signature)).toBe(true);
    }
  });

  it('does not verify once any signed field changed, or under another address', () => {
    const parsed = parseAnnounce({ ...frame, summary: 'echo agent!' }, TS);
    expect(parsed.ok && verifyBy(ADDRESS, parsed.value.signed, parsed.value.signature)).toBe(false);
    const other = `0x${'11'.repeat(32)}`;
    const spoofed = parseAnnounce({ ...frame, address: other }, TS);
    expect(spoofed.ok && verifyBy(other, spoofed.value.signed, spoofed.value.signature)).toBe(false);
    expect(verifyBy(ADDRESS, 'x', 'zz')).toBe(false);
  });

  it('is refused outside the replay window, with a long summary, or without a signature', () => {
    expect(parseAnnounce(frame, TS + 301)).toEqual({
      ok: false,
      error: 'Timestamp outside the accepted window',
    });
    expect(parseAnnounce({ ...frame, summary: 'x'.repeat(1001) }, TS)).toEqual({
      ok: false,
      error: 'Summary too long (max 1000 chars)',
    });
    expect(parseAnnounce({ ...announce }, TS)).toEqual({ ok: false, error: 'Missing signature' });
    expect(parseAnnounce({ ...frame, address: '0xABC' }, TS)).toEqual({
      ok: false,
      error: 'Invalid address',
    });
  });
});
