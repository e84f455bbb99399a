// The costs of kafkajs 2.2.4 that createKafka mends in place (ADR 0043, 0053, 0061), each only in
// the version it was written against.
import type { LogSink } from './logger.ts';
import { fixEncoderBuffers } from './encoderFix.ts';
import { fixRecordHeaderDecoding } from './recordDecoderFix.ts';
import { FIXED_KAFKAJS_VERSION, fixRequestQueueIdleLoop } from './requestQueueFix.ts';

/** Applies every fix (each is idempotent) and warns of each one not in place. */
export function fixKafkajs(logger: LogSink): void {
  const fixes: [applied: boolean, otherwise: string][] = [
    [
      fixRequestQueueIdleLoop(),
      'kafkajs is not the version its idle-loop fix was written for; the fix is not applied',
    ],
    [
      fixRecordHeaderDecoding(),
      'kafkajs record headers decode as kafkajs does (quadratic): another kafkajs version, or a fetch decoded before createKafka',
    ],
    [
      fixEncoderBuffers(),
      'kafkajs is not the version its encoder fix was written for; its encoders zero-fill a buffer each',
    ],
  ];
  for (const [applied, otherwise] of fixes) {
    if (!applied) logger.warn({ expected: FIXED_KAFKAJS_VERSION }, otherwise);
  }
}
