import type { Redis } from 'ioredis';

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
  constructor(pub: Redis, channelOf: (replica: string) => string) {
    this.pub = pub;
    this.channelOf = channelOf;
    this.sub = pub.duplicate();
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

  async send(replica: string, m: BusMessage): Promise<void> {
    await this.pub.publish(
      this.channelOf(replica),
      `${m.kind}|${m.address}|${m.sid}|${m.origin}\n${m.frame}`,
    );
  }

  async close(): Promise<void> {
    await this.sub.quit().catch(() => undefined);
  }
}
