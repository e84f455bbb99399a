import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's `schemas/` folder: one `.avsc` per domain event type and version. */
export const SCHEMAS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../schemas');
