import type { Redis } from 'ioredis';
import { subscribeWhenReady } from '@oan/http';
import { parseRuntimeWake, runtimeWakesChannel } from '@oan/projection';
import { OAN_WS_RUNTIME_JOBS } from '@oan/protocol';
import type { OanSocket } from './types.ts';

/** Whether the socket asked for runtime wake-ups in its handshake (`auth.runtimes: true`). */
export const wantsRuntimeWakes = (socket: OanSocket): boolean =>
  (socket.handshake.auth as { runtimes?: unknown } | undefined)?.runtimes === true;

/**
 * Relays the fleet's runtime wakes (published by the runtimes processes on a Redis channel) to this
 * gateway's sockets that opted in, as `runtime_jobs`. Sockets that did not opt in are never
 * registered here, so a v1 connector receives exactly the `oan:event` emissions it received before.
 * A wake is a hint with no seq: nothing is backfilled, a worker that missed one claims on its own.
 */
export class RuntimeWakeRelay {
  private readonly sockets = new Map<string, Set<OanSocket>>();
  private readonly sub: Redis;
  private readonly channel: string;
  /** `sub` becomes a subscriber connection (it can serve nothing else); stop() disconnects it. */
  constructor(sub: Redis, prefix: string) {
    this.sub = sub;
    this.channel = runtimeWakesChannel(prefix);
  }

  /** Resolves once subscribed: wakes published after this reach the sockets. */
  async start(): Promise<void> {
    this.sub.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      const m = parseRuntimeWake(message);
      if (!m) return;
      for (const socket of this.sockets.get(m.accountId) ?? []) {
        if (socket.connected) socket.emit(OAN_WS_RUNTIME_JOBS, m.wake);
      }
    });
    await subscribeWhenReady(this.sub, this.channel);
  }

  /** Registers a socket past the handshake if it opted in; it leaves when it disconnects. */
  add(socket: OanSocket): void {
    if (!wantsRuntimeWakes(socket)) return;
    const a = socket.data.accountId;
    let set = this.sockets.get(a);
    if (!set) this.sockets.set(a, (set = new Set()));
    set.add(socket);
    socket.once('disconnect', () => {
      set.delete(socket);
      if (set.size === 0 && this.sockets.get(a) === set) this.sockets.delete(a);
    });
  }

  stop(): void {
    this.sub.disconnect();
  }
}
