import { describe, expect, it } from 'vitest';
import { OAN_CONNECTOR_RELEASES } from '@oan/protocol';
import { compareConnectorVersions, findOutdatedConnector, parseClientInfo } from '../src/index.ts';

const dsh = '@openagentnetwork/dsh-plugin';
const decl = (version: string, name = dsh) => ({ name, version });

describe('findOutdatedConnector', () => {
  it('reports dsh-plugin 0.1.4 against latest 0.1.5', () => {
    expect(findOutdatedConnector(decl('0.1.4'), OAN_CONNECTOR_RELEASES)).toEqual({
      connector: dsh,
      installed: '0.1.4',
      latest: '0.1.5',
    });
  });

  it.each(['0.1.5', '0.1.5-beta.1', '0.1.5+build.7', '0.2.0', '1.0.0'])(
    'says nothing for version %s',
    (v) => {
      expect(findOutdatedConnector(decl(v), OAN_CONNECTOR_RELEASES)).toBeNull();
    },
  );

  it('says nothing for unknown names, unparsable versions and malformed declarations', () => {
    for (const d of [
      decl('0.0.1', '@someone/else'),
      decl('0.0.1', 'constructor'),
      decl('latest'),
      decl('0.1'),
      decl('v0.1.4'),
      decl('0.1.4 '),
      decl(''),
      decl('0.1.4', ''),
      decl('0.1.4', 'a'.repeat(129)),
      decl(`0.1.${'4'.repeat(64)}`),
      { name: dsh },
      { name: dsh, version: 4 },
      null,
      undefined,
      'dsh 0.1.4',
      [dsh, '0.1.4'],
    ]) {
      expect(findOutdatedConnector(d, OAN_CONNECTOR_RELEASES)).toBeNull();
    }
  });

  it('uses the registry it is given', () => {
    expect(findOutdatedConnector(decl('0.9.0', 'x'), { x: '0.10.0' })).toEqual({
      connector: 'x',
      installed: '0.9.0',
      latest: '0.10.0',
    });
  });

  it('reports a pre-release of an older version as that version', () => {
    expect(findOutdatedConnector(decl('0.1.2-beta.1'), OAN_CONNECTOR_RELEASES)?.installed).toBe(
      '0.1.2-beta.1',
    );
  });
});

describe('compareConnectorVersions', () => {
  it('compares numerically, component by component', () => {
    expect(compareConnectorVersions('0.1.9', '0.1.10')).toBe(-1);
    expect(compareConnectorVersions('0.2.0', '0.10.9')).toBe(-1);
    expect(compareConnectorVersions('1.0.0', '0.99.99')).toBe(1);
    expect(compareConnectorVersions(' 0.1.5 ', '0.1.5')).toBe(0);
  });

  it('ignores -… and +… suffixes', () => {
    expect(compareConnectorVersions('0.1.2-beta.1', '0.1.2')).toBe(0);
    expect(compareConnectorVersions('0.1.2+sha', '0.1.2-rc')).toBe(0);
  });

  it('answers unknown (null) for what does not parse', () => {
    expect(compareConnectorVersions('1.2', '1.2.0')).toBeNull();
    expect(compareConnectorVersions('1.2.0', 'x')).toBeNull();
    expect(compareConnectorVersions('1.2.0.1', '1.2.0')).toBeNull();
  });
});

describe('parseClientInfo', () => {
  it('keeps a valid declaration as given and drops anything out of bounds', () => {
    expect(parseClientInfo({ name: dsh, version: '0.1.5', extra: 1 })).toEqual({
      name: dsh,
      version: '0.1.5',
    });
    expect(parseClientInfo({ name: 'a b', version: '1.0.0' })).toBeNull();
    expect(parseClientInfo({ name: 'a', version: '1.0.0/x' })).toBeNull();
    expect(parseClientInfo({ name: 'a'.repeat(128), version: '1'.repeat(64) })).not.toBeNull();
    expect(parseClientInfo({ name: 'a', version: '1'.repeat(65) })).toBeNull();
  });
});
