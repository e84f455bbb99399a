import type { Redis } from 'ioredis';
import { type Logger, subscribeWhenReady } from '@oan/http';

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
  private sub?: Redis;
  private readonly pub: Redis;
  private readonly channelOf: (replica: string) => string;
  private readonly logger: Logger;
  private onGap: () => void = () => undefined;
  constructor(pub: Redis, channelOf: (replica: string) => string, logger: Logger) {
    this.pub = pub;
    this.channelOf = channelOf;
    this.logger = logger;
  }

  /**
   * `onGap` is called when frames for this replica may have been lost: its connection came back
   * after a drop (ioredis has subscribed again), or Redis no longer counted its subscription.
   */
  async start(
    replica: string,
    onMessage: (m: BusMessage) => void,
    onGap: () => void = () => undefined,
  ): Promise<void> {
    this.onGap = onGap;
    const channel = this.channelOf(replica);
    // Named after its channel, so an operator (or a test) can tell it in CLIENT LIST.
    const sub = (this.sub = this.pub.duplicate({ connectionName: channel }));
    // While this connection is down, frames for this replica are lost (pub/sub keeps nothing).
    sub.on('error', (err: Error) => this.logger.warn({ err }, 'relay bus connection failed'));
    sub.on('reconnecting', () => this.logger.warn('relay bus reconnecting'));
    sub.on('message', (_channel: string, text: string) => {
      const nl = text.indexOf('\n');
      const [kind, address, sid, origin] = text.slice(0, nl).split('|');
      if (!kind || !address || sid === undefined || !origin) return;
      onMessage({ kind: kind as BusKind, address, sid, origin, frame: text.slice(nl + 1) });
    });
    await subscribeWhenReady(sub, channel);
    sub.on('ready', () => this.onGap());
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
    if (this.sub) await subscribeWhenReady(this.sub, channel);
    this.onGap();
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
    await this.sub?.quit().catch(() => undefined);
  }
}
