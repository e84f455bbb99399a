/**
 * Records shaped like the domain topics' for the benchmarks that encode or decode them without a
 * broker (`kafka-decode.ts`, `kafka-encode.ts`): the seven headers `domainHeaders` writes, as the
 * `i`th record of a run.
 */
import { randomUUID } from 'node:crypto';

export const domainRecordHeaders = (i: number): Record<string, string> => ({
  'oan-type': 'GoferCreated',
  'oan-schema-version': '1',
  'oan-event-id': randomUUID(),
  'oan-stream-id': `gofer-${randomUUID()}`,
  'oan-stream-version': String(1 + (i % 5)),
  'oan-occurred-at': new Date(1_764_892_800_000 + i).toISOString(),
  'oan-position': String(1_000_000 + i),
});
