import type { FastifyBaseLogger } from 'fastify';
import { checkCredentials } from '@oan/auth';
import type { MikroORM } from '@oan/db';
import { fetchRange, lastSeqs, maxSeq } from '@oan/projection';
import type { OanEventEnvelope } from '@oan/protocol';
import type { GatewayMetrics } from '../infra/metrics.ts';
import type { PushEntry } from '@oan/projection';
import { cutConnection, exceededLimit, measureBacklog, type EngineConn } from './backlog.ts';
import type { OanSocket } from './types.ts';

export interface DeliveryDeps {
  orm: MikroORM;
  metrics: GatewayMetrics;
  log: FastifyBaseLogger;
  /** How often sockets that fell behind the table are caught up (a lost publish). */
  sweepMs?: number;
  /** How often every socket's credential is read again (a bound on a missed revoke or ban); default 2000 ms. */
  credentialCheckMs?: number;
  /** How old a ban must be before the re-check cuts its sockets without the notice; default 3000 ms. */
  banGraceMs?: number;
}

/** How long a revoked key id is remembered, to cut a handshake that raced the revoke entry. */
const REVOKED_MEMORY_MS = 60_000;
const SWEEP_CHUNK = 1000;

const isBanNotice = (e: OanEventEnvelope): boolean =>
  e.type === 'system_notice' && (e.payload as { kind?: unknown }).kind === 'account_banned';

/**
 * Delivers envelopes to this gateway's own sockets: exactly once per socket, in seq
 * order. Work for one account runs on a promise chain, so an async gap fill never lets a later
 * envelope overtake an earlier one (clients drop any seq at or below their cursor, so it would be lost); accounts proceed independently. An emit never waits for
 * the client, so a slow socket delays no other socket, of its account or any other; one that falls
 * too far behind is cut (socket/backlog.ts) and backfills over REST after reconnecting.
 */
export class Delivery {
  private readonly sockets = new Map<string, Set<OanSocket>>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly revoked = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly credentialTimer: NodeJS.Timeout;
  private sweeping = false;
  private checking = false;

  private readonly deps: DeliveryDeps;
  constructor(deps: DeliveryDeps) {
    this.deps = deps;
    this.timer = setInterval(() => void this.sweep(), deps.sweepMs ?? 2000);
    this.timer.unref();
    this.credentialTimer = setInterval(() => void this.recheckCredentials(), deps.credentialCheckMs ?? 2000);
    this.credentialTimer.unref();
  }

  /**
   * The socket's starting point, read during the handshake: the client is told it is connected only
   * afterwards, so its REST backfill sees every seq up to here and the push covers the rest.
   */
  async startingSeq(accountId: string): Promise<bigint> {
    return maxSeq(this.deps.orm.em.fork(), accountId);
  }

  /** A socket past the handshake, with `lastSeq` set by `startingSeq`. */
  add(socket: OanSocket): void {
    const { accountId: a, apiKeyId } = socket.data;
    if (apiKeyId !== null && this.wasRevoked(apiKeyId)) {
      socket.disconnect(true);
      return;
    }
    let set = this.sockets.get(a);
    if (!set) this.sockets.set(a, (set = new Set()));
    set.add(socket);
    this.deps.metrics.sockets.inc();
    socket.once('disconnect', () => {
      set.delete(socket);
      if (set.size === 0 && this.sockets.get(a) === set) this.sockets.delete(a);
      this.deps.metrics.sockets.dec();
    });
    // A publish that arrived between the handshake read and now found no socket here: check once.
    this.enqueue(a, async () => this.catchUp([socket], await maxSeq(this.deps.orm.em.fork(), a)));
  }

  onEntry(entry: PushEntry): void {
    if (entry.t === 'revoke') return this.revoke(entry.a, entry.k);
    // A push to an account with no sockets here is a no-op (not even a JSON parse).
    if (!this.sockets.has(entry.a)) return;
    this.enqueue(entry.a, () => this.deliverLive(entry.a, entry.s, entry.e));
  }

  /** A revoked API key cuts exactly the sockets that authenticated with key `k`; the rest of the account keeps going. */
  private revoke(accountId: string, apiKeyId: string): void {
    const now = Date.now();
    for (const [k, until] of this.revoked) if (until < now) this.revoked.delete(k);
    this.revoked.set(apiKeyId, now + REVOKED_MEMORY_MS);
    for (const socket of this.sockets.get(accountId) ?? []) {
      if (socket.data.apiKeyId === apiKeyId) socket.disconnect(true);
    }
  }

  private wasRevoked(apiKeyId: string): boolean {
    return (this.revoked.get(apiKeyId) ?? 0) >= Date.now();
  }

  private async deliverLive(accountId: string, seq: bigint, text: string): Promise<void> {
    let envelope: OanEventEnvelope | undefined;
    const banned: OanSocket[] = [];
    for (const socket of this.sockets.get(accountId) ?? []) {
      const last = socket.data.lastSeq;
      if (last === undefined || seq <= last || !socket.connected) continue;
      // A gap: publishes were lost or arrived out of order; close it from the table first, since a lower seq sent later would be dropped.
      if (seq > last + 1n && !(await this.fill(socket, last, seq - 1n, banned))) continue;
      envelope ??= JSON.parse(text) as OanEventEnvelope;
      this.emit(socket, envelope, seq, banned);
    }
    // The ban notice reaches every socket first, then they are cut.
    for (const socket of banned) socket.disconnect(true);
  }

  /** Emits the rows in (after, upTo] to one socket; false when they could not be read. */
  private async fill(socket: OanSocket, after: bigint, upTo: bigint, banned: OanSocket[]): Promise<boolean> {
    let rows;
    try {
      rows = await fetchRange(this.deps.orm.em.fork(), socket.data.accountId, after, upTo);
    } catch (err) {
      // Emitting past the gap would make the client skip it for good; the sweep retries instead.
      this.deps.log.warn({ err }, 'gap fill failed; holding delivery for the socket');
      return false;
    }
    this.deps.metrics.gapFills.inc();
    for (const row of rows) {
      if (!socket.connected) return false;
      this.emit(socket, JSON.parse(row.envelope) as OanEventEnvelope, BigInt(row.seq), banned);
    }
    return socket.connected;
  }

  private emit(socket: OanSocket, envelope: OanEventEnvelope, seq: bigint, banned: OanSocket[]): void {
    if (this.cutIfBehind(socket)) return;
    socket.emit('oan:event', envelope);
    socket.data.lastSeq = seq;
    this.deps.metrics.emitted.inc();
    if (isBanNotice(envelope)) banned.push(socket);
  }

  /**
   * Checked before each emit, so the backlog never holds more than a limit plus one envelope. The
   * cut turns `socket.connected` false at once, which stops the callers' loops for this socket.
   */
  private cutIfBehind(socket: OanSocket): boolean {
    const conn = socket.conn as unknown as EngineConn;
    const backlog = measureBacklog(conn);
    const limit = exceededLimit(backlog);
    if (!limit) return false;
    this.deps.metrics.slowDisconnects.inc({ limit });
    // No handshake data here: the auth payload carries the token.
    this.deps.log.warn(
      {
        accountId: socket.data.accountId,
        socketId: socket.id,
        lastSeq: socket.data.lastSeq?.toString(),
        limit,
        ...backlog,
      },
      'socket fell too far behind; disconnecting it (the client backfills on reconnect)',
    );
    cutConnection(conn);
    return true;
  }

  /** Catches up sockets behind the table: covers a publish lost between commit and XADD (nothing lost). */
  private async sweep(): Promise<void> {
    if (this.sweeping || this.sockets.size === 0) return;
    this.sweeping = true;
    try {
      const accounts = [...this.sockets.keys()];
      for (let i = 0; i < accounts.length; i += SWEEP_CHUNK) {
        const last = await lastSeqs(this.deps.orm.em.fork(), accounts.slice(i, i + SWEEP_CHUNK));
        for (const [a, m] of last) this.catchUpIfBehind(a, m);
      }
    } catch (err) {
      this.deps.log.warn({ err }, 'delivery sweep failed');
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * No socket outlives its credential by more than a bounded time, whatever else is down.
   * The revoke entry on the push stream and the ban's notice cut sockets at once when they arrive;
   * this reads the credential view (auth's own tables, written with the revoke or the ban) for every
   * socket here on a timer, and cuts those whose key is gone or expired, and those of accounts banned
   * longer than the grace (so that the notice, when it can be delivered, still comes first).
   */
  private async recheckCredentials(): Promise<void> {
    if (this.checking || this.sockets.size === 0) return;
    this.checking = true;
    try {
      const accounts = [...this.sockets.keys()];
      for (let i = 0; i < accounts.length; i += SWEEP_CHUNK) {
        const chunk = accounts.slice(i, i + SWEEP_CHUNK);
        const keyIds = new Set<string>();
        for (const a of chunk) {
          for (const s of this.sockets.get(a) ?? [])
            if (s.data.apiKeyId !== null) keyIds.add(s.data.apiKeyId);
        }
        const { banned, liveKeys: live } = await checkCredentials(
          this.deps.orm.em.fork(),
          chunk,
          [...keyIds],
          this.deps.banGraceMs ?? 3000,
        );
        for (const a of chunk) {
          for (const socket of [...(this.sockets.get(a) ?? [])]) {
            const keyGone = socket.data.apiKeyId !== null && !live.has(socket.data.apiKeyId);
            if (!banned.has(a) && !keyGone) continue;
            this.deps.log.info(
              {
                accountId: a,
                apiKeyId: socket.data.apiKeyId,
                reason: banned.has(a) ? 'banned' : 'key revoked',
              },
              'credential re-check: disconnecting a socket',
            );
            socket.disconnect(true);
          }
        }
      }
    } catch (err) {
      // The database is unreachable: the sockets stay until the next check reads it (bounded by it).
      this.deps.log.warn({ err }, 'credential re-check failed');
    } finally {
      this.checking = false;
    }
  }

  private catchUpIfBehind(accountId: string, max: bigint): void {
    const sockets = [...(this.sockets.get(accountId) ?? [])];
    if (sockets.some((s) => s.data.lastSeq !== undefined && s.data.lastSeq < max)) {
      this.enqueue(accountId, () => this.catchUp(sockets, max));
    }
  }

  /** Emits (lastSeq, max] to each given socket still behind; runs on the account chain. */
  private async catchUp(sockets: readonly OanSocket[], max: bigint): Promise<void> {
    const banned: OanSocket[] = [];
    for (const socket of sockets) {
      const last = socket.data.lastSeq;
      if (last !== undefined && last < max && socket.connected) await this.fill(socket, last, max, banned);
    }
    for (const socket of banned) socket.disconnect(true);
  }

  private enqueue(accountId: string, task: () => Promise<void>): void {
    const next = (this.chains.get(accountId) ?? Promise.resolve())
      .then(task)
      .catch((err: unknown) => this.deps.log.error({ err }, 'delivery task failed'));
    this.chains.set(accountId, next);
    void next.then(() => {
      if (this.chains.get(accountId) === next) this.chains.delete(accountId);
    });
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.credentialTimer);
    await Promise.all(this.chains.values());
  }
}
