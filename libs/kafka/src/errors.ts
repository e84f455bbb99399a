// Typed errors of @oan/kafka (callers branch on `instanceof`).

/** No schema for this type, or for this version of it. */
export class UnknownSchemaError extends Error {
  override readonly name = 'UnknownSchemaError';
  readonly type: string;
  readonly version?: number;
  constructor(type: string, version?: number) {
    super(version === undefined ? `unknown schema type '${type}'` : `unknown schema '${type}' v${version}`);
    this.type = type;
    this.version = version;
  }
}

/** A schema file is misnamed, malformed, or cannot evolve into the latest version of its type. */
export class SchemaLoadError extends Error {
  override readonly name = 'SchemaLoadError';
  readonly file: string;
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.file = file;
  }
}

/** Data does not match the schema it is encoded with. `paths` lists the offending fields. */
export class SchemaValidationError extends Error {
  override readonly name = 'SchemaValidationError';
  readonly type: string;
  readonly version: number;
  readonly paths: string[];
  constructor(type: string, version: number, paths: string[]) {
    super(`invalid ${type} v${version} at: ${paths.join(', ') || '(root)'}`);
    this.type = type;
    this.version = version;
    this.paths = paths;
  }
}

/** A Kafka message lacks what @oan/kafka needs to decode it (value, type/version headers). */
export class InvalidMessageError extends Error {
  override readonly name = 'InvalidMessageError';
  readonly offset?: string;
  constructor(message: string, offset?: string) {
    super(offset === undefined ? message : `${message} (offset ${offset})`);
    this.offset = offset;
  }
}
