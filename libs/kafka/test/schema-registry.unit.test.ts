import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  HEADER_SCHEMA_VERSION,
  HEADER_TYPE,
  SCHEMAS_DIR,
  SchemaLoadError,
  SchemaRegistry,
  SchemaValidationError,
  UnknownSchemaError,
  loadSchemaDir,
} from '../src/index.ts';

const fixture = (name: string): string =>
  fileURLToPath(new URL(`./fixtures/schemas/${name}`, import.meta.url));
const registry = new SchemaRegistry(fixture('good'));
function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('SchemaRegistry', () => {
  it('loads the tree: types, versions, namespaces', () => {
    expect(registry.types()).toEqual(['Gadget', 'Widget']);
    expect(registry.versions('Widget')).toEqual([1, 2]);
    expect(registry.latestVersion('Widget')).toBe(2);
    expect(registry.latestVersion('Gadget')).toBe(1);
    expect(registry.schema('Gadget').namespace).toBe('oan.test.other');
    expect(registry.schema('Widget', 1).file).toBe('test/Widget.v1.avsc');
  });

  it('round-trips the latest version and sets the oan headers', () => {
    const data = { id: 'w1', count: 3, label: 'big', color: 'blue' };
    const encoded = registry.encode('Widget', data);
    expect(encoded.headers).toEqual({ [HEADER_TYPE]: 'Widget', [HEADER_SCHEMA_VERSION]: '2' });
    expect(Buffer.isBuffer(encoded.value)).toBe(true);
    expect({ ...registry.decode('Widget', 2, encoded.value) }).toEqual(data);
  });

  it('round-trips JSON blobs carried as Avro strings and longs', () => {
    const data = {
      id: 'g',
      payload: JSON.stringify({ nested: [1, { a: 'b' }] }),
      createdAt: 1_700_000_000_123,
    };
    const out = registry.decode('Gadget', '1', registry.encode('Gadget', data).value);
    expect({ ...out }).toEqual(data);
    expect(JSON.parse(String(out.payload))).toEqual({ nested: [1, { a: 'b' }] });
  });

  it('reads data written with v1 as v2 (new fields take their defaults)', () => {
    const v1 = registry.encode('Widget', { id: 'w1', count: 7 }, 1);
    expect(v1.headers[HEADER_SCHEMA_VERSION]).toBe('1');
    const read = registry.decode('Widget', v1.headers[HEADER_SCHEMA_VERSION], v1.value);
    expect({ ...read }).toEqual({ id: 'w1', count: 7, label: null, color: 'red' });
  });

  it('throws UnknownSchemaError for an unknown type or version', () => {
    expect(() => registry.encode('Nope', {})).toThrow(UnknownSchemaError);
    expect(() => registry.latestVersion('Nope')).toThrow(UnknownSchemaError);
    expect(() => registry.encode('Widget', { id: 'x', count: 1 }, 9)).toThrow(UnknownSchemaError);
    const err = caught(() => registry.decode('Widget', 3, Buffer.alloc(0)));
    expect(err).toBeInstanceOf(UnknownSchemaError);
    expect(err).toMatchObject({ type: 'Widget', version: 3 });
  });

  it('rejects data that does not match the schema, naming the fields', () => {
    expect(() => registry.encode('Widget', { id: 'x', count: 'many' })).toThrow(SchemaValidationError);
    const err = caught(() => registry.encode('Widget', { id: 1, count: 'many' }, 1));
    expect(err).toBeInstanceOf(SchemaValidationError);
    expect(err).toMatchObject({ type: 'Widget', version: 1, paths: ['id', 'count'] });
  });

  it('fails to load when the record name does not match the file name', () => {
    expect(() => new SchemaRegistry(fixture('mismatch'))).toThrow(SchemaLoadError);
    expect(() => loadSchemaDir(fixture('mismatch'))).toThrow(
      /record name 'Other' does not match file name 'Wrong'/,
    );
  });

  it('fails to load a schema without namespace, a misnamed file, a duplicate, an incompatible version', () => {
    expect(() => new SchemaRegistry(fixture('no-namespace'))).toThrow(/namespace must be set/);
    expect(() => new SchemaRegistry(fixture('bad-name'))).toThrow(/<Type>\.v<N>\.avsc/);
    expect(() => new SchemaRegistry(fixture('duplicate'))).toThrow(/duplicates a\/Thing\.v1\.avsc/);
    expect(() => new SchemaRegistry(fixture('incompatible'))).toThrow(
      /Thing\.v1\.avsc: cannot be read as Thing\.v2/,
    );
  });

  it('loads the repo schemas/ tree', () => {
    const repo = new SchemaRegistry(SCHEMAS_DIR);
    expect(repo.types().length).toBeGreaterThan(0);
  });
});
