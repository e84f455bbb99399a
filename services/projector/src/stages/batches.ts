/**
 * What each stage does with one batch, inside applyBatch's transaction (pipeline.ts runs them for its
 * consumers; bench/replayWrites.ts runs them on records read beforehand, to time the writes alone).
 */
import type { Logger } from '@oan/http';
import { fromConsumedMessage, toKafkaMessage, type Sender, type SchemaRegistry } from '@oan/kafka';
import {
  deadLetter,
  recordProgress,
  type ApplyFn,
  type OneStatementFn,
  type ProjectionRecord,
} from '@oan/projection';
import { projections, type DomainEvent } from '@oan/readmodels';
import { topicNames, type ProjectorConfig } from '../config.ts';
import { metrics } from '../metrics.ts';
import type { Notification } from '../notifications.ts';
import { projectDomainEvents } from './domain.ts';
import { writeEnvelopes, writeEnvelopesAlone, type CommittedEnvelope } from './oan.ts';

/** `<prefix>gofers.events` → `gofers`: the event store a domain topic comes from. */
const sourceOf = (cfg: ProjectorConfig, topic: string) =>
  topic.slice(cfg.TOPIC_PREFIX.length).replace(/\.events$/, '');

function decodeDomainRecord(registry: SchemaRegistry, r: ProjectionRecord): DomainEvent {
  const rec = fromConsumedMessage(registry, r);
  const positionText = rec.headers['oan-position'];
  const position = positionText && /^\d+$/.test(positionText) ? BigInt(positionText) : null;
  return {
    eventId: rec.headers['oan-event-id'] ?? '',
    type: rec.type,
    streamId: rec.headers['oan-stream-id'] ?? '',
    partitionKey: r.key ?? '',
    occurredAt: rec.headers['oan-occurred-at'] ?? new Date(Number(r.timestamp)).toISOString(),
    position,
    data: rec.data,
  };
}

/** The deps a stage's batch needs (the pipeline's, or a benchmark's that applies batches itself). */
export interface StageDeps {
  cfg: ProjectorConfig;
  registry: SchemaRegistry;
  logger: Logger;
}

/**
 * Stage 1's work for one batch of a domain topic, inside applyBatch's transaction: decodes, applies
 * the read models, produces the notifications (live only: with a producer) and records the progress.
 * Made once per stage; the topic names and the projection context are worked out here, not per batch.
 */
export function applyDomain(d: StageDeps, producer: Sender | undefined): (topic: string) => ApplyFn<void> {
  const t = topicNames(d.cfg);
  const ctx = d.cfg.OAN_WEB_BASE_URL ? { webBaseUrl: d.cfg.OAN_WEB_BASE_URL } : {};
  return (topic) => async (em, fresh) => {
    const events: DomainEvent[] = [];
    const applied = new Map<string, bigint>();
    for (const r of fresh) {
      try {
        const event = decodeDomainRecord(d.registry, r);
        events.push(event);
        if (event.position !== null && event.position > (applied.get(event.partitionKey) ?? 0n)) {
          applied.set(event.partitionKey, event.position);
        }
      } catch (err) {
        metrics.deadLetters.inc();
        d.logger.error(
          { err: (err as Error).message, topic: r.topic, offset: r.offset },
          'undecodable record',
        );
        await deadLetter(em, 'domain', r, (err as Error).message);
      }
    }
    const notifications = await projectDomainEvents(em, events, projections, ctx, {
      notify: producer !== undefined,
    });
    // Produced before the offset commits: a crash in between re-produces the same eventIds,
    // which stage 2 skips (at-least-once on the log, exactly-once in the table).
    const places =
      producer && notifications.length > 0
        ? await producer.sendPlaced({
            topic: t.oan,
            acks: -1,
            messages: notifications.map((n) =>
              toKafkaMessage(d.registry, { key: n.accountId, type: 'OanNotification', data: n }),
            ),
          })
        : undefined;
    // The positions applied and (acked above) the notifications the gateway's read-your-writes
    // may now wait for in the table, with their offsets, which order them whatever order two
    // partitions' batches commit in. Replay produces nothing, so it expects nothing.
    const produced = places ? notifications.map((n, i) => ({ ...n, ...places[i] })) : [];
    await recordProgress(em, sourceOf(d.cfg, topic), applied, produced);
    metrics.domainEvents.inc(events.length);
  };
}

/** A stage-2 batch's notifications, and the records among them that do not decode. */
function decodeNotifications(d: StageDeps, fresh: ProjectionRecord[]) {
  const batch: Notification[] = [];
  const undecodable: { r: ProjectionRecord; err: Error }[] = [];
  for (const r of fresh) {
    try {
      batch.push(fromConsumedMessage<Notification>(d.registry, r).data);
    } catch (err) {
      undecodable.push({ r, err: err as Error });
    }
  }
  return { batch, undecodable };
}

/** Stage 2's work for one batch, inside applyBatch's transaction: the envelopes, numbered and written. */
export function applyOan(d: StageDeps): ApplyFn<CommittedEnvelope[]> {
  return async (em, fresh) => {
    const { batch, undecodable } = decodeNotifications(d, fresh);
    for (const { r, err } of undecodable) {
      metrics.deadLetters.inc();
      await deadLetter(em, 'oan', r, err.message);
    }
    return writeEnvelopes(em, batch);
  };
}

/**
 * Stage 2's batch as one statement (ADR 0059), where it can go that way: every record decodes (one
 * that does not is dead-lettered, in the transaction) and `writeEnvelopesAlone` takes the batch.
 */
export function applyOanAlone(d: StageDeps): OneStatementFn<CommittedEnvelope[]> {
  return async (em, fresh, move) => {
    const { batch, undecodable } = decodeNotifications(d, fresh);
    return undecodable.length > 0 ? undefined : writeEnvelopesAlone(em, batch, move);
  };
}
