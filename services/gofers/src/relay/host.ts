import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@oan/db';
import { checkCredentials } from '@oan/auth';
import { type Logger, subscribeWhenReady } from '@oan/http';
import { goferProfile, onlineAgent } from '@oan/readmodels';
import type { Redis } from 'ioredis';
import type { CallerBrain } from '../brain/types.ts';
import type { GoferContext } from '../commands/context.ts';
import { recordRelayTurn } from '../commands/relay.ts';
import { markOwnerAnswersHanded } from '../infra/relayOwnerAnswers.ts';
import { publishedRelayAgents, relayAgentOf, type RelayAgentRow } from '../infra/relayAgents.ts';
import { relayView } from '../infra/relayView.ts';
import { GoferAgent, NOT_FOUND, type CallerTurn, type TurnOutcome } from './agent.ts';
import { relayReply } from './ownerQuestions.ts';
import { RelayBudget, type RelayBudgetLimits } from './budget.ts';
import type { KeySealer } from './keys.ts';

/** What the owner's routes need of the relay host: bring one Gofer's announcement in line with the store. */
export interface RelayControl {
  /**
   * Announces or withdraws the Gofer as `gofers.relay_agents` now says, here or in the gofers
   * process that holds it, and waits (bounded) until the relay's directory agrees.
   */
  sync(goferId: string): Promise<void>;
}

export interface RelayHostDeps {
  orm: MikroORM;
  redis: Redis;
  /** Redis key prefix of the deployment (REDIS_PREFIX). */
  prefix: string;
  ctx: GoferContext;
  brain: CallerBrain;
  sealer: KeySealer;
  logger: Logger;
  /** The relay's base URLs (GOFER_RELAY_URLS). */
  urls: string[];
  /** Turns per caller address and Gofer, per Gofer and per owner account (src/relay/budget.ts). */
  limits: RelayBudgetLimits;
  /** How long sync() waits for the relay's directory (default 10 s). */
  settleMs?: number;
  /** How often every published Gofer is checked (default 5 s). */
  reconcileMs?: number;
}

/** A lease outlives a missed renewal or two; a crashed holder's Gofers come back after it lapses. */
const LEASE_MS = 12_000;
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/** What a published Gofer announces: its public name and description (seed 001: ≤ 1000 characters). */
export const relaySummary = (p: { name: string; description: string } | undefined) =>
  (p ? `${p.name}: ${p.description}` : 'A Gofer on the Open Agent Network').slice(0, 1000);

/**
 * The published Gofers of this process on the fleet's relay (ADR 0023). Each Gofer is
 * announced by one gofers process: the one holding its Redis lease. Every process reconciles the
 * published rows every few seconds (a restart announces them all again; a crashed holder's
 * Gofers are taken over once its leases lapse) and at once on a change told on the Redis channel.
 */
export class RelayHost implements RelayControl {
  private readonly deps: RelayHostDeps;
  private readonly hostId = randomUUID();
  private readonly held = new Map<string, GoferAgent>();
  private sub: Redis | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Reconciliations run one at a time (a Gofer is never announced twice by one process). */
  private chain: Promise<unknown> = Promise.resolve();
  private stopping = false;
  private readonly budget: RelayBudget;

  constructor(deps: RelayHostDeps) {
    this.deps = deps;
    this.budget = new RelayBudget(deps.redis, deps.prefix, deps.limits);
  }

  private get channel() {
    return `${this.deps.prefix}gofers:relay:changed`;
  }
  private lease = (goferId: string) => `${this.deps.prefix}gofers:relay:lease:${goferId}`;

  async start(): Promise<void> {
    this.sub = this.deps.redis.duplicate();
    this.sub.on('message', (_channel: string, goferId: string) => {
      void this.serially(() => this.reconcileOne(goferId));
    });
    await subscribeWhenReady(this.sub, this.channel);
    await this.serially(() => this.reconcileAll());
    this.timer = setInterval(
      () => void this.serially(() => this.reconcileAll()),
      this.deps.reconcileMs ?? 5_000,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    await this.sub?.quit().catch(() => undefined);
    await this.chain;
    await Promise.all([...this.held.keys()].map((id) => this.drop(id, true)));
  }

  /** The Gofers this process announces now (health, tests). */
  get announcing(): string[] {
    return [...this.held.keys()];
  }

  async sync(goferId: string): Promise<void> {
    await this.serially(() => this.reconcileOne(goferId));
    await this.deps.redis.publish(this.channel, goferId);
    const row = await relayAgentOf(this.deps.orm.em.fork(), goferId);
    if (row) await this.settle(row.address, row.published);
  }

  /** Waits until the relay's directory lists (or no longer lists) the address, at most settleMs. */
  private async settle(address: string, online: boolean): Promise<void> {
    const deadline = Date.now() + (this.deps.settleMs ?? 10_000);
    while (Date.now() < deadline) {
      const listed = await onlineAgent(this.deps.orm.em.fork(), address);
      if (Boolean(listed) === online) return;
      await sleep(100);
    }
    this.deps.logger.warn({ address, online }, 'the relay directory did not follow in time');
  }

  private serially<T>(fn: () => Promise<T>): Promise<T | undefined> {
    const run = this.chain.then(fn).catch((err: unknown) => {
      this.deps.logger.warn({ err }, 'relay reconciliation failed');
      return undefined;
    });
    this.chain = run;
    return run;
  }

  private async reconcileAll(): Promise<void> {
    if (this.stopping) return;
    const em = this.deps.orm.em.fork();
    const rows = await publishedRelayAgents(em);
    const wanted = new Set(rows.map((r) => r.goferId));
    for (const goferId of [...this.held.keys()]) if (!wanted.has(goferId)) await this.drop(goferId, true);
    for (const row of rows) {
      const agent = this.held.get(row.goferId);
      if (!agent) {
        await this.tryHold(row);
        continue;
      }
      const renewed = await this.deps.redis.eval(RENEW, 1, this.lease(row.goferId), this.hostId, LEASE_MS);
      // Another process holds it now (this one stalled past its lease): it announces, not us.
      if (renewed !== 1) await this.drop(row.goferId, false);
      else agent.setSummary(relaySummary(await goferProfile(em, row.goferId)));
    }
  }

  private async reconcileOne(goferId: string): Promise<void> {
    if (this.stopping) return;
    const row = await relayAgentOf(this.deps.orm.em.fork(), goferId);
    if (row?.published && !this.held.has(goferId)) await this.tryHold(row);
    else if (!row?.published && this.held.has(goferId)) await this.drop(goferId, true);
  }

  private async tryHold(row: RelayAgentRow): Promise<void> {
    const key = this.lease(row.goferId);
    const got = await this.deps.redis.set(key, this.hostId, 'PX', LEASE_MS, 'NX');
    if (got !== 'OK' && (await this.deps.redis.get(key)) !== this.hostId) return;
    let privateKey;
    try {
      privateKey = this.deps.sealer.open(row.sealedKey, row.goferId);
    } catch {
      // Never the sealed text: only that it does not open (another GOFER_RELAY_KEY_SECRET?).
      this.deps.logger.error({ goferId: row.goferId }, 'the relay key of a published Gofer does not open');
      await this.deps.redis.eval(RELEASE, 1, key, this.hostId);
      return;
    }
    const profile = await goferProfile(this.deps.orm.em.fork(), row.goferId);
    const agent = new GoferAgent({
      goferId: row.goferId,
      key: privateKey,
      urls: this.deps.urls,
      summary: relaySummary(profile),
      admit: (caller) => this.admit(row, caller),
      answer: (turn) => this.answer(row.goferId, turn),
      logger: this.deps.logger,
    });
    this.held.set(row.goferId, agent);
    agent.start();
  }

  private async drop(goferId: string, release: boolean): Promise<void> {
    const agent = this.held.get(goferId);
    this.held.delete(goferId);
    await agent?.stop();
    if (release) await this.deps.redis.eval(RELEASE, 1, this.lease(goferId), this.hostId);
  }

  /**
   * Before anything is spent on a turn: the owner is not banned (the credential view answers from
   * the moment the ban command did, before the unpublication reaches this process), and the turn
   * fits the caller's, the Gofer's and the owner's budgets.
   */
  private async admit(row: RelayAgentRow, caller: string): Promise<string | null> {
    const { banned } = await checkCredentials(this.deps.orm.em.fork(), [row.accountId], [], 0);
    if (banned.has(row.accountId)) return NOT_FOUND;
    return this.budget.spend({ goferId: row.goferId, accountId: row.accountId, caller });
  }

  /**
   * One INPUT: the brain answers from the Gofer's public profile with the caller's words labelled
   * (buildCallerPrompt), and the turn is recorded in the role-chat before the caller sees it, so an
   * unpublish or a deletion meanwhile means no answer.
   */
  private async answer(goferId: string, turn: CallerTurn): Promise<TurnOutcome> {
    const { ctx, brain } = this.deps;
    // The newest deciding events only, never the whole stream (one row per role-chat message).
    const { state } = await relayView(ctx.orm.em.fork(), ctx.store.schema, goferId);
    if (state.status !== 'active' || state.relayAddress === null) return { ok: false, error: NOT_FOUND };
    const { name, description, values, demands, locale } = state;
    const out = await brain.answerCaller({
      gofer: { goferId, locale, name, description, values: [...values], demands: [...demands] },
      caller: turn.caller,
      history: turn.history,
      message: turn.prompt,
    });
    // ADR 0036: the owner is asked when only the owner can answer; earlier answers come first.
    const { content, handed } = await relayReply(ctx, { goferId, locale, turn, out });
    const { appended } = await recordRelayTurn(ctx, {
      goferId,
      caller: turn.caller,
      asked: turn.prompt,
      answered: content,
    });
    if (!appended) return { ok: false, error: NOT_FOUND };
    await markOwnerAnswersHanded(ctx.orm.em.fork(), handed, ctx.now().toISOString());
    return { ok: true, content };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
