import { Counter, Gauge } from 'prom-client';

export const metrics = {
  domainEvents: new Counter({ name: 'oan_projector_domain_events_total', help: 'Domain events applied' }),
  envelopes: new Counter({
    name: 'oan_projector_envelopes_total',
    help: 'OAN envelopes written to the event table',
  }),
  refusedBatches: new Counter({
    name: 'oan_projector_refused_batches_total',
    help: 'Batch commits refused because another member had moved the partition offset (a rebalance)',
    labelNames: ['stage'],
  }),
  deadLetters: new Counter({
    name: 'oan_projector_dead_letters_total',
    help: 'Records that could not be decoded',
  }),
  // Set after each batch from the fetch's high watermark: records on the partition not yet applied.
  lag: new Gauge({
    name: 'oan_projector_consumer_lag',
    help: 'Records behind the partition high watermark after the last applied batch',
    labelNames: ['stage', 'topic', 'partition'],
  }),
};

/** high watermark − (last applied offset + 1), per stage and partition. */
export function recordLag(
  stage: 'domain' | 'oan',
  b: { topic: string; partition: number; highWatermark: string },
  lastOffset: string,
): void {
  const lag = BigInt(b.highWatermark) - BigInt(lastOffset) - 1n;
  metrics.lag.set({ stage, topic: b.topic, partition: String(b.partition) }, Number(lag > 0n ? lag : 0n));
}
