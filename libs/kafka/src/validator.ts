import avro from 'avsc';
import type { SchemaRegistry } from './schema-registry.ts';

export class EventSchemaError extends Error {
  override readonly name = 'EventSchemaError';
}

/**
 * An event-store validator (structurally `EventValidator` of @oan/eventstore): refuses to store an event
 * whose `data` does not match its Avro record exactly, so nothing the outbox publisher cannot encode ever
 * reaches an outbox. Every declared field must be present (explicit nulls: the stored JSON must not rely
 * on Avro defaults) and no undeclared field may be. Messages name field paths, never values (they may be
 * hashes of credentials).
 */
export function avroEventValidator(registry: SchemaRegistry) {
  return {
    assertValid(type: string, version: number, data: unknown): void {
      let schema: avro.Type;
      try {
        schema = registry.schema(type, version).avro;
      } catch {
        throw new EventSchemaError(`No schema for event ${type} v${version}`);
      }
      const bad: string[] = [];
      if (typeof data === 'object' && data !== null && schema instanceof avro.types.RecordType) {
        for (const f of schema.fields) if (!Object.hasOwn(data, f.name)) bad.push(f.name);
      }
      const ok = schema.isValid(data, {
        noUndeclaredFields: true,
        errorHook: (path: string[]) => bad.push(path.join('.') || '(root)'),
      });
      if (!ok || bad.length > 0) {
        throw new EventSchemaError(
          `Event ${type} v${version} does not match its schema at ${bad.join(', ')}`,
        );
      }
    },
    latestVersion(type: string): number {
      try {
        return registry.latestVersion(type);
      } catch {
        throw new EventSchemaError(`No schema for event ${type}`);
      }
    },
  };
}
