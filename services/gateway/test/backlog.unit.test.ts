import { describe, expect, it, vi } from 'vitest';
import {
  cutConnection,
  exceededLimit,
  MAX_BUFFERED_BYTES,
  MAX_QUEUED_PACKETS,
  measureBacklog,
  type EngineConn,
} from '../src/socket/backlog.ts';

/** An engine.io socket with `packets` queued packets of `size` characters and `buffered` bytes in ws. */
function conn(packets: number, size: number, buffered?: number): EngineConn {
  const ws = buffered === undefined ? undefined : { bufferedAmount: buffered, terminate: vi.fn() };
  return {
    writeBuffer: Array.from({ length: packets }, () => ({ data: 'x'.repeat(size) })),
    transport: { socket: ws },
    close: vi.fn<(discard?: boolean) => unknown>(),
  };
}

describe('the send backlog bound', () => {
  it('is 1,000 queued packets or 4 MiB buffered, whichever comes first', () => {
    expect(MAX_QUEUED_PACKETS).toBe(1000);
    expect(MAX_BUFFERED_BYTES).toBe(4 * 1024 * 1024);
  });

  it('counts the engine write buffer and ws bufferedAmount together', () => {
    expect(measureBacklog(conn(3, 10, 100))).toEqual({ packets: 3, bytes: 130 });
    // Polling has no ws; binary packets count their bytes.
    const polling = conn(0, 0);
    polling.writeBuffer = [{ data: new Uint8Array(7) }, { data: 'abc' }, {}];
    expect(measureBacklog(polling)).toEqual({ packets: 3, bytes: 10 });
  });

  it('is within the bound up to the packet constant and past it one packet later', () => {
    expect(exceededLimit(measureBacklog(conn(MAX_QUEUED_PACKETS, 1, 0)))).toBeNull();
    expect(exceededLimit(measureBacklog(conn(MAX_QUEUED_PACKETS + 1, 1, 0)))).toBe('packets');
  });

  it('is within the bound up to the byte constant and past it one byte later, ws included', () => {
    expect(exceededLimit(measureBacklog(conn(1, 1024, MAX_BUFFERED_BYTES - 1024)))).toBeNull();
    expect(exceededLimit(measureBacklog(conn(1, 1024, MAX_BUFFERED_BYTES - 1023)))).toBe('bytes');
    expect(exceededLimit({ packets: 0, bytes: MAX_BUFFERED_BYTES + 1 })).toBe('bytes');
  });

  it('cuts with a discarding close (no wait for a drain) and terminates the ws', () => {
    const close = vi.fn<(discard?: boolean) => unknown>();
    const terminate = vi.fn<() => void>();
    cutConnection({
      writeBuffer: [{ data: 'x' }],
      transport: { socket: { bufferedAmount: 10, terminate } },
      close,
    });
    expect(close).toHaveBeenCalledWith(true);
    expect(terminate).toHaveBeenCalledOnce();
    const pollingClose = vi.fn<(discard?: boolean) => unknown>();
    cutConnection({ writeBuffer: [{ data: 'x' }], transport: {}, close: pollingClose });
    expect(pollingClose).toHaveBeenCalledWith(true);
  });
});
