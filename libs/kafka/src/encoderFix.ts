// kafkajs 2.2.4 builds every request with Encoders, and each Encoder starts with `Buffer.alloc(512)`:
// a buffer of its own, zero-filled, outside V8's heap. A produce request of one record with our seven
// headers makes about a dozen of them (the request, its topic and partition arrays, the record batch,
// the record, each header), and encoding it cost 46–146 µs of CPU here against 19–30 µs with buffers
// from Node's pool (`bench/kafka-encode.ts`, ADR 0061). The fix leaves kafkajs's writes as they are
// and changes only where the bytes live: an Encoder starts empty and takes its first buffer, and each
// larger one, from `Buffer.allocUnsafe` (Node's pool below 4 KiB), growing by powers of two from 512
// bytes as before. Every write method kafkajs has writes each byte it counts (`offset` only moves past
// bytes just written), and `encoder.buffer` is a view of `[0, offset)`, so the bytes it hands out are
// the same and nothing unwritten is ever read. Applied in place, on the class every kafkajs module
// already holds, so it works wherever kafkajs was loaded first (the e2e bundles load it before any of
// our code); only to the version it was written against.
import { createRequire } from 'node:module';
import { FIXED_KAFKAJS_VERSION } from './requestQueueFix.ts';

const require = createRequire(import.meta.url);

const ENCODER = 'kafkajs/src/protocol/encoder.js';
const FIXED = Symbol.for('oan.kafkajs.encoderFix');

/** The first buffer an Encoder takes: kafkajs's own default (`new Encoder()` → 512 bytes). */
const FIRST_SIZE = 512;

interface EncoderState {
  buf: Buffer;
  offset: number;
}

type EnsureAvailable = (this: EncoderState, length: number) => void;
type NextPowerOfTwo = (this: void, value: number) => number;
/** The two places kafkajs decides an Encoder's buffer sizes, which the fix replaces. */
interface Allocation {
  ensureAvailable: EnsureAvailable;
  nextPowerOfTwo: NextPowerOfTwo;
}

export interface EncoderClass {
  new (initialSize?: number): EncoderState & { readonly buffer: Buffer };
  nextPowerOfTwo: NextPowerOfTwo;
  prototype: { ensureAvailable: EnsureAvailable };
  /** kafkajs's own allocation, kept once the fix is in place. */
  [FIXED]?: Allocation;
}

const allocationOf = (Encoder: EncoderClass): Allocation => ({
  ensureAvailable: Encoder.prototype.ensureAvailable,
  nextPowerOfTwo: Encoder.nextPowerOfTwo,
});

function install(Encoder: EncoderClass, allocation: Allocation): void {
  Encoder.prototype.ensureAvailable = allocation.ensureAvailable;
  Encoder.nextPowerOfTwo = allocation.nextPowerOfTwo;
}

/** kafkajs's Encoder class (for tests and the benchmark). */
export function encoderClass(): EncoderClass {
  return require(ENCODER) as EncoderClass;
}

/** The smallest power of two of at least `n` bytes (and at least FIRST_SIZE). */
const capacityFor = (n: number): number => Math.max(FIRST_SIZE, 2 ** Math.ceil(Math.log2(n)));

/**
 * Makes kafkajs's Encoders take their buffers from Node's pool, uninitialised; idempotent. Answers
 * whether the fix is in place (false for a kafkajs other than FIXED_KAFKAJS_VERSION).
 */
export function fixEncoderBuffers(): boolean {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== FIXED_KAFKAJS_VERSION) return false;
  const Encoder = encoderClass();
  if (Encoder[FIXED]) return true;
  const original = allocationOf(Encoder);
  install(Encoder, {
    ensureAvailable(this: EncoderState, length: number) {
      const needed = this.offset + length;
      if (needed <= this.buf.length) return;
      const next = Buffer.allocUnsafe(capacityFor(needed));
      this.buf.copy(next, 0, 0, this.offset);
      this.buf = next;
    },
    // kafkajs calls this in two places: the constructor, for its first buffer, and ensureAvailable,
    // replaced here. So it now sizes only the constructor's buffer, which starts empty (a zero-length
    // Buffer has no backing store to allocate) until the first write takes one from the pool.
    nextPowerOfTwo: () => 0,
  });
  Encoder[FIXED] = original;
  return true;
}

/**
 * Runs `fn` with kafkajs's own allocation, the fix taken off until `fn` settles and then put back:
 * for comparisons in a process that encodes nothing else meanwhile (a test, the benchmark).
 */
export async function withOriginalEncoder<T>(fn: () => Promise<T>): Promise<T> {
  const Encoder = encoderClass();
  const original = Encoder[FIXED];
  if (!original) return await fn();
  const fixed = allocationOf(Encoder);
  install(Encoder, original);
  try {
    return await fn();
  } finally {
    install(Encoder, fixed);
  }
}
