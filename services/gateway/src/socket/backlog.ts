/**
 * The per-socket send backlog. `socket.emit` never waits: for a client that stopped reading, each
 * packet lands in engine.io's `writeBuffer` (the websocket transport stays unwritable until the
 * previous batch reached the kernel) and the batch in flight in ws's `bufferedAmount`. Neither is
 * bounded, so a stalled client would hold an ever-growing share of the gateway's memory. A socket
 * past either limit is cut instead; the client reconnects and backfills from its cursor over REST,
 * and nothing is lost because every envelope is in read.oan_event.
 */

/** Packets waiting in engine.io's write buffer, above which a socket is cut. */
export const MAX_QUEUED_PACKETS = 1000;
/** Bytes waiting in the write buffer plus ws's buffered amount, above which a socket is cut. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

export interface Backlog {
  packets: number;
  bytes: number;
}

export type BacklogLimit = 'packets' | 'bytes';

/**
 * The engine.io 6 socket members this module reads (private in its typings). `transport.socket`
 * is the ws WebSocket of the websocket transport; polling has none.
 */
export interface EngineConn {
  writeBuffer: readonly { data?: unknown }[];
  transport: { socket?: { bufferedAmount?: number; terminate?: () => void } };
  close(discard?: boolean): unknown;
}

/** Bytes are string lengths for text packets (the socket.io encoder's output), exact for ASCII. */
export function measureBacklog(conn: EngineConn): Backlog {
  let bytes = conn.transport.socket?.bufferedAmount ?? 0;
  for (const packet of conn.writeBuffer) {
    const d = packet.data;
    if (typeof d === 'string') bytes += d.length;
    else if (d instanceof ArrayBuffer || ArrayBuffer.isView(d)) bytes += d.byteLength;
  }
  return { packets: conn.writeBuffer.length, bytes };
}

/** Which limit the backlog is past, packets first; null while within both. */
export function exceededLimit(backlog: Backlog): BacklogLimit | null {
  if (backlog.packets > MAX_QUEUED_PACKETS) return 'packets';
  if (backlog.bytes > MAX_BUFFERED_BYTES) return 'bytes';
  return null;
}

/**
 * Drops the connection now. Not `socket.disconnect(true)`: engine.io closes only once the write
 * buffer drains, which a stalled client never lets happen. The discard close ends the engine
 * socket synchronously (socket.io reports `forced close`, `socket.connected` turns false), and
 * terminating the ws frees what it and the kernel hold; the client sees `transport close`, the
 * same as a gateway restart, and reconnects on its own.
 */
export function cutConnection(conn: EngineConn): void {
  const ws = conn.transport.socket;
  conn.close(true);
  ws?.terminate?.();
}
