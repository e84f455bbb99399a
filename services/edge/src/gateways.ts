/**
 * The gateway pool. Socket.IO long-polling is stateful: every request of a session must reach the
 * gateway that holds it. Each gateway mints session ids `<GATEWAY_ID>.<random>`, so the edge reads
 * the owner from the `sid` query parameter; a request without a sid (a new session, or a websocket-
 * only client) may go anywhere and is spread round robin.
 */
export class GatewayPool {
  private readonly byId: ReadonlyMap<string, string>;
  private cursor = 0;

  constructor(
    private readonly urls: readonly string[],
    ids: readonly string[] = urls.map((_, i) => `g${i + 1}`),
  ) {
    if (urls.length === 0) throw new Error('at least one gateway is needed');
    this.byId = new Map(ids.map((id, i) => [id, urls[i] as string]));
  }

  next(): string {
    const url = this.urls[this.cursor % this.urls.length] as string;
    this.cursor = (this.cursor + 1) % this.urls.length;
    return url;
  }

  /** The owner of `sid`, else round robin (an unknown owner then answers "Session ID unknown"). */
  forSession(sid: unknown): string {
    if (typeof sid === 'string') {
      const dot = sid.indexOf('.');
      const owner = dot > 0 ? this.byId.get(sid.slice(0, dot)) : undefined;
      if (owner) return owner;
    }
    return this.next();
  }
}
