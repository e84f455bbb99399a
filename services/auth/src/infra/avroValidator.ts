import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import avro from 'avsc';
import type { EventValidator } from '@oan/eventstore';

/** schemas/auth at the repository root (STYLE: `schemas/<context>/<EventType>.v<N>.avsc`). */
export const AUTH_SCHEMA_DIR = fileURLToPath(new URL('../../../../schemas/auth/', import.meta.url));

const FILE = /^([A-Za-z]+)\.v(\d+)\.avsc$/;

/** Every auth event schema, keyed `<Type>.v<N>`; a schema that does not parse fails here, at start. */
export function loadAuthSchemas(dir = AUTH_SCHEMA_DIR): Map<string, avro.Type> {
  const types = new Map<string, avro.Type>();
  for (const file of readdirSync(dir).sort()) {
    const m = FILE.exec(file);
    if (!m) continue;
    const schema = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8')) as avro.Schema & { name?: string };
    if (schema.name !== m[1])
      throw new Error(`${file}: record name ${String(schema.name)} does not match the file name`);
    types.set(`${m[1]}.v${m[2]}`, avro.Type.forSchema(schema));
  }
  return types;
}

export class EventSchemaError extends Error {
  override readonly name = 'EventSchemaError';
}

/**
 * Refuses to store an event whose `data` does not match its Avro record exactly (no undeclared
 * fields), so nothing the relay cannot encode ever reaches the outbox. Messages name field paths,
 * never values (they may be hashes of credentials).
 */
export function createAvroValidator(types = loadAuthSchemas()): EventValidator {
  return {
    assertValid(type, version, data) {
      const schema = types.get(`${type}.v${version}`);
      if (!schema) throw new EventSchemaError(`No schema for event ${type} v${version}`);
      const bad: string[] = [];
      // Avro would fill a missing nullable field with its default; the stored JSON must not rely on
      // that, so every declared field is present (explicit nulls).
      if (typeof data === 'object' && data !== null && schema instanceof avro.types.RecordType) {
        for (const f of schema.fields) if (!Object.hasOwn(data, f.name)) bad.push(f.name);
      }
      const ok = schema.isValid(data, {
        noUndeclaredFields: true,
        errorHook: (path) => bad.push(path.join('.') || '(root)'),
      });
      if (!ok || bad.length > 0)
        throw new EventSchemaError(
          `Event ${type} v${version} does not match its schema at ${bad.join(', ')}`,
        );
    },
  };
}
