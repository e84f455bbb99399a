// Avro serde over a directory tree of `<Type>.v<N>.avsc` files (e.g. schemas/auth/AccountRegistered.v1.avsc).
// Readers always decode into the latest version of a type; every older version must resolve into it,
// which is checked when the registry loads.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import avsc from 'avsc';
import type { Type } from 'avsc';
import { SchemaLoadError, SchemaValidationError, UnknownSchemaError } from './errors.ts';

export const HEADER_TYPE = 'oan-type';
export const HEADER_SCHEMA_VERSION = 'oan-schema-version';

type AvroSchema = Parameters<typeof avsc.Type.forSchema>[0];
type Resolver = ReturnType<Type['createResolver']>;

export interface LoadedSchema {
  type: string;
  version: number;
  namespace: string;
  /** Path relative to the loaded directory. */
  file: string;
  avro: Type;
}

export interface EncodedValue {
  value: Buffer;
  headers: { [HEADER_TYPE]: string; [HEADER_SCHEMA_VERSION]: string };
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const FILE_NAME = /^([A-Za-z_][A-Za-z0-9_]*)\.v([1-9][0-9]*)\.avsc$/;

function isRecordSchema(x: unknown): x is AvroSchema & { type: 'record'; name: string; namespace?: string } {
  if (typeof x !== 'object' || x === null) return false;
  const o = x as Record<string, unknown>;
  return o.type === 'record' && typeof o.name === 'string' && Array.isArray(o.fields);
}

function listAvsc(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listAvsc(path));
    else if (entry.isFile() && entry.name.endsWith('.avsc')) out.push(path);
  }
  return out.sort();
}

function loadFile(root: string, path: string): LoadedSchema {
  const file = relative(root, path);
  const m = FILE_NAME.exec(basename(path));
  if (!m?.[1] || !m[2]) throw new SchemaLoadError(file, 'file name must be <Type>.v<N>.avsc');
  const type = m[1];
  const version = Number(m[2]);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SchemaLoadError(file, `invalid JSON: ${messageOf(err)}`);
  }
  if (!isRecordSchema(json)) throw new SchemaLoadError(file, 'not an Avro record schema');
  const dot = json.name.lastIndexOf('.');
  const name = dot >= 0 ? json.name.slice(dot + 1) : json.name;
  const namespace = dot >= 0 ? json.name.slice(0, dot) : (json.namespace ?? '');
  if (name !== type)
    throw new SchemaLoadError(file, `record name '${name}' does not match file name '${type}'`);
  if (namespace === '') throw new SchemaLoadError(file, 'record namespace must be set');
  try {
    return { type, version, namespace, file, avro: avsc.Type.forSchema(json) };
  } catch (err) {
    throw new SchemaLoadError(file, `invalid Avro schema: ${messageOf(err)}`);
  }
}

/** Reads every `.avsc` under `dir` (recursively, synchronously). Throws SchemaLoadError. */
export function loadSchemaDir(dir: string): LoadedSchema[] {
  return listAvsc(dir).map((path) => loadFile(dir, path));
}

interface TypeEntry {
  versions: Map<number, LoadedSchema>;
  latest: LoadedSchema;
  /** writer version -> resolver into `latest` (absent for latest itself). */
  resolvers: Map<number, Resolver>;
}

export class SchemaRegistry {
  private readonly entries = new Map<string, TypeEntry>();

  /** `source`: a directory tree of `.avsc` files, or schemas already loaded. */
  constructor(source: string | LoadedSchema[]) {
    const schemas = typeof source === 'string' ? loadSchemaDir(source) : source;
    for (const s of schemas) {
      const entry = this.entries.get(s.type);
      if (!entry) {
        this.entries.set(s.type, { versions: new Map([[s.version, s]]), latest: s, resolvers: new Map() });
        continue;
      }
      const dup = entry.versions.get(s.version);
      if (dup) throw new SchemaLoadError(s.file, `duplicates ${dup.file}`);
      entry.versions.set(s.version, s);
      if (s.version > entry.latest.version) entry.latest = s;
    }
    for (const entry of this.entries.values()) {
      for (const s of entry.versions.values()) {
        if (s === entry.latest) continue;
        try {
          entry.resolvers.set(s.version, entry.latest.avro.createResolver(s.avro));
        } catch (err) {
          throw new SchemaLoadError(s.file, `cannot be read as ${entry.latest.file}: ${messageOf(err)}`);
        }
      }
    }
  }

  /** Known types, sorted. */
  types(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** Known versions of `type`, ascending. */
  versions(type: string): number[] {
    return [...this.entry(type).versions.keys()].sort((a, b) => a - b);
  }

  latestVersion(type: string): number {
    return this.entry(type).latest.version;
  }

  schema(type: string, version?: number): LoadedSchema {
    const entry = this.entry(type);
    if (version === undefined) return entry.latest;
    const s = entry.versions.get(version);
    if (!s) throw new UnknownSchemaError(type, version);
    return s;
  }

  /** Encodes `data` with `type` v`version` (default: latest). Throws SchemaValidationError. */
  encode(type: string, data: unknown, version?: number): EncodedValue {
    const s = this.schema(type, version);
    const paths: string[] = [];
    const valid = s.avro.isValid(data, { errorHook: (path: string[]) => paths.push(path.join('.')) });
    if (!valid) throw new SchemaValidationError(type, s.version, paths);
    return {
      value: s.avro.toBuffer(data),
      headers: { [HEADER_TYPE]: type, [HEADER_SCHEMA_VERSION]: String(s.version) },
    };
  }

  /** Decodes a value written with `type` v`writerVersion` into the latest version of `type`. */
  decode<T = Record<string, unknown>>(type: string, writerVersion: number | string, buffer: Buffer): T {
    const version = typeof writerVersion === 'number' ? writerVersion : Number(writerVersion);
    if (!Number.isInteger(version)) throw new UnknownSchemaError(type, Number.NaN);
    const entry = this.entry(type);
    const writer = entry.versions.get(version);
    if (!writer) throw new UnknownSchemaError(type, version);
    const resolver = entry.resolvers.get(version);
    const value: unknown = resolver
      ? entry.latest.avro.fromBuffer(buffer, resolver)
      : entry.latest.avro.fromBuffer(buffer);
    return value as T;
  }

  private entry(type: string): TypeEntry {
    const entry = this.entries.get(type);
    if (!entry) throw new UnknownSchemaError(type);
    return entry;
  }
}
