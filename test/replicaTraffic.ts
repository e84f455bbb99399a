import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OanEventEnvelope } from '@oan/protocol';
import type { ProcessName, TestConnector, TestFleet } from '@oan/testing';

/** What a write came back with: a status, or `unknown` when the connection broke after it was sent. */
export type Outcome = number | 'unknown';

export interface Write {
  account: 'a' | 'b';
  what: 'message' | 'chat';
  text: string;
  outcome: Outcome;
  at: number;
}

const refused = (err: unknown) => (err as { cause?: { code?: unknown } }).cause?.code === 'ECONNREFUSED';

/**
 * A client behind a load balancer of the edges: each request goes to the next edge, and to another
 * only when the connection to this one was refused (nothing was sent). A write that may have been
 * sent is never sent again: its outcome is what came back, or `unknown`.
 */
export class EdgeClient {
  private next = 0;
  private readonly edges: readonly string[];
  private readonly token: string;
  constructor(edges: readonly string[], token: string) {
    this.edges = edges;
    this.token = token;
  }

  async send(method: string, path: string, body?: unknown): Promise<{ outcome: Outcome; text: string }> {
    for (let tried = 0; tried < this.edges.length; tried++) {
      const edge = this.edges[this.next++ % this.edges.length]!;
      try {
        const res = await fetch(`${edge}/api/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${this.token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { outcome: res.status, text: await res.text() };
      } catch (err) {
        if (!refused(err)) return { outcome: 'unknown', text: String(err) };
      }
    }
    return { outcome: 'unknown', text: 'every edge refused' };
  }
}

/**
 * Writes while replicas die: each account posts a conversation message in turn, and account a a chat
 * message to its Gofer every third round, each with a text of its own. Runs until `stop()`.
 */
export class Traffic {
  readonly writes: Write[] = [];
  private stopped = false;
  private loop: Promise<void> | undefined;

  private readonly clients: { a: EdgeClient; b: EdgeClient };
  private readonly conversationId: string;
  private readonly goferId: string;
  constructor(clients: { a: EdgeClient; b: EdgeClient }, conversationId: string, goferId: string) {
    this.clients = clients;
    this.conversationId = conversationId;
    this.goferId = goferId;
  }

  start(): void {
    this.loop = (async () => {
      for (let round = 0; !this.stopped; round++) {
        for (const account of ['a', 'b'] as const) await this.message(account, round);
        if (round % 3 === 0) await this.chat(round);
        await new Promise((r) => setTimeout(r, 150));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /** Writes answered 2xx so far. */
  succeeded(): number {
    return this.writes.filter((w) => typeof w.outcome === 'number' && w.outcome < 300).length;
  }

  private async message(account: 'a' | 'b', round: number): Promise<void> {
    const text = `${account} says ${round}`;
    const { outcome } = await this.clients[account].send(
      'POST',
      `/conversations/${this.conversationId}/messages`,
      { content: text },
    );
    this.writes.push({ account, what: 'message', text, outcome, at: Date.now() });
  }

  private async chat(round: number): Promise<void> {
    const text = `Still looking, round ${round}.`;
    const { outcome } = await this.clients.a.send('POST', `/gofers/${this.goferId}/chat/messages`, {
      content: text,
    });
    this.writes.push({ account: 'a', what: 'chat', text, outcome, at: Date.now() });
  }
}

/**
 * The seqs each socket connection of a connector pushed, one list per connection (a reconnect
 * starts a new one): within one, every envelope must come once and in order.
 */
export function socketSessions(c: TestConnector): string[][] {
  const sessions: string[][] = [c.pushes.map((e) => e.seq)];
  c.socket!.on('connect', () => sessions.push([]));
  c.socket!.on('oan:event', (e: OanEventEnvelope) => sessions.at(-1)!.push(e.seq));
  return sessions;
}

/** The JSON lines a process of the fleet logged (its log file keeps them across restarts). */
export function logLines(fleet: TestFleet, name: ProcessName): Record<string, unknown>[] {
  let text = '';
  try {
    text = readFileSync(join(fleet.logDir, `${name}.log`), 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

/** The replicas of a kind whose log has a line `match` accepts, each with how many. */
export function loggedBy(
  fleet: TestFleet,
  names: readonly ProcessName[],
  match: (line: Record<string, unknown>) => boolean,
): Map<ProcessName, number> {
  const found = new Map<ProcessName, number>();
  for (const name of names) {
    const n = logLines(fleet, name).filter(match).length;
    if (n > 0) found.set(name, n);
  }
  return found;
}

/** Every line `match` accepts over the replicas, with the replica that logged it, in time order. */
export function loggedInOrder(
  fleet: TestFleet,
  names: readonly ProcessName[],
  match: (line: Record<string, unknown>) => boolean,
): { name: ProcessName; time: number }[] {
  return names
    .flatMap((name) =>
      logLines(fleet, name)
        .filter(match)
        .map((l) => ({ name, time: Number(l.time) })),
    )
    .sort((x, y) => x.time - y.time);
}

/**
 * A projector replica consuming `oan.events` now: the one last assigned partitions when it joined
 * that group (with one partition the others wait as members with none; with several they share them).
 */
export function activeProjector(fleet: TestFleet): ProcessName | undefined {
  const joins = fleet.replicasOf('projector').flatMap((name) =>
    logLines(fleet, name)
      .filter((l) => l.msg === 'kafka consumer joined group' && String(l.groupId).endsWith('projector.oan'))
      .map((l) => ({
        name,
        time: Number(l.time),
        assignment: (l.assignment ?? {}) as Record<string, unknown[]>,
      })),
  );
  const assigned = joins.filter((j) => Object.values(j.assignment).some((p) => p.length > 0));
  return assigned.sort((x, y) => x.time - y.time).at(-1)?.name;
}
