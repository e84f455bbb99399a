import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The kernel hands ports from `ip_local_port_range` to outgoing connections (every Postgres, Redis
 * and Kafka client here makes them), so a port found free there can be taken between this check and
 * the child process's listen (EADDRINUSE, a fleet that starts without one of its processes). Ports
 * below that range are never handed out implicitly: they are chosen there, at random, never the same
 * twice in one process.
 */
function implicitRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 12_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}
const handedOut = new Set<number>();
/**
 * The Fetch standard's "bad ports" in the range chosen from: fetch (undici) refuses to connect to
 * them, so a fleet process listening there never looks ready (a CI run lost a fleet to 10080).
 */
const FETCH_BAD_PORTS = new Set([10_080]);

function tryListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A loopback port free now, outside the kernel's range for outgoing connections (see above). */
export async function freePort(): Promise<number> {
  const high = implicitRangeStart() - 1;
  const low = 10_000;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (handedOut.has(port) || FETCH_BAD_PORTS.has(port)) continue;
    if (await tryListen(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${low} and ${high}`);
}

/** Polls `check` until it resolves truthy or `timeoutMs` passes (tests wait on conditions, never sleep). */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 15_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      const why = lastErr instanceof Error ? `: ${lastErr.message}` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
