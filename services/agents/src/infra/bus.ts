import type { Redis } from 'ioredis';
import type { Logger } from '@oan/http';

/**
 * Frames between replicas over Redis pub/sub, one channel per replica (ADR 0019). A message is a
 * header line `<kind>|<address>|<sessionId>|<origin>` and the frame text after it, so the frame is never parsed
 * or re-encoded on the way. One publishing connection per replica keeps a session's frames in order
 * (Redis delivers one connection's publishes to a channel in order).
 */
export type BusKind = 'a' | 'c' | 'x' | 'g';
export interface BusMessage {
  /**
   * a: to the agent's socket; c: to the client's socket; x: drop the agent socket `sid` (replaced);
   * g: the agent's socket of session `sid` is gone (its client's unanswered turn fails).
   */
  kind: BusKind;
  address: string;
  sid: string;
  /** The sending replica (for `a`: where the client is). */
  origin: string;
  frame: string;
}

export class Bus {
  private readonly sub: Redis;

  private readonly pub: Redis;
  private readonly channelOf: (replica: string) => string;
  private readonly logger: Logger;
  constructor(pub: Redis, channelOf: (replica: string) => string, logger: Logger) {
    this.pub = pub;
    this.channelOf = channelOf;
    this.logger = logger;
    this.sub = pub.duplicate();
    // While this connection is down, frames for this replica are lost (pub/sub keeps nothing).
    this.sub.on('error', (err: Error) => logger.warn({ err }, 'relay bus connection failed'));
    this.sub.on('reconnecting', () => logger.warn('relay bus reconnecting'));
  }

  async start(replica: string, onMessage: (m: BusMessage) => void): Promise<void> {
    this.sub.on('message', (_channel: string, text: string) => {
      const nl = text.indexOf('\n');
      const [kind, address, sid, origin] = text.slice(0, nl).split('|');
      if (!kind || !address || sid === undefined || !origin) return;
      onMessage({ kind: kind as BusKind, address, sid, origin, frame: text.slice(nl + 1) });
    });
    await this.sub.subscribe(this.channelOf(replica));
  }

  /**
   * Redis still counts this replica's subscription (checked with every heartbeat): if it lost it
   * while the connection looked healthy, this replica would hear no frame from the others and no one
   * would know, so it says so and subscribes again.
   */
  async ensureListening(replica: string): Promise<void> {
    const channel = this.channelOf(replica);
    const [, listeners] = (await this.pub.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
    if (listeners > 0) return;
    this.logger.warn({ replica }, 'relay bus subscription lost; subscribing again');
    await this.sub.subscribe(channel);
  }

  /** false when no replica listened (`replica` is gone or its bus connection is down): the frame is lost. */
  async send(replica: string, m: BusMessage): Promise<boolean> {
    const heard = await this.pub.publish(
      this.channelOf(replica),
      `${m.kind}|${m.address}|${m.sid}|${m.origin}\n${m.frame}`,
    );
    if (heard === 0) this.logger.warn({ replica, kind: m.kind }, 'relay bus frame reached no replica');
    return heard > 0;
  }

  async close(): Promise<void> {
    await this.sub.quit().catch(() => undefined);
  }
}
