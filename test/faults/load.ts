import type { OanEventEnvelope } from '@oan/protocol';
import type { FaultConnector, Outcome } from './connector.ts';

/** One side of the load: an account, its Gofer and (when matched) the conversation it writes to. */
export interface Party {
  name: string;
  userId: string;
  goferId: string;
  /** Two SDK-like connectors: round robin puts them on both gateways. */
  connectors: [FaultConnector, FaultConnector];
  /** Where this party's connectors started: the seq before the fault runs. */
  startCursor: bigint;
}

export interface Sent {
  kind: 'chat' | 'message';
  party: string;
  /** Unique text: how a chat message is found in the event store (its answer carries no id). */
  content: string;
  outcome: Outcome<{ id?: string }>;
}

export interface LoadRun {
  label: string;
  sent: Sent[];
  reads: Outcome[];
  /** Resolves when every worker finished its current request. */
  stop(): Promise<void>;
}

const isOk = (o: Outcome) => typeof o.status === 'number' && o.status >= 200 && o.status < 300;
export const ok = (s: Sent) => isOk(s.outcome);

/**
 * Mixed load, as connectors make it: each party posts Gofer chat messages and (with a conversation)
 * conversation messages, and reads /events, until `stop()`. Workers pace themselves so the fleet
 * stays responsive on a shared CI machine.
 */
export function startLoad(label: string, parties: Party[], conversationId?: string): LoadRun {
  const run: Omit<LoadRun, 'stop'> = { label, sent: [], reads: [] };
  let stopped = false;
  let n = 0;
  const pace = () => new Promise((r) => setTimeout(r, 40));
  const workers: Promise<void>[] = [];
  for (const p of parties) {
    const [c0, c1] = p.connectors;
    workers.push(
      (async () => {
        while (!stopped) {
          const content = `${label} chat ${p.name} #${n++}`;
          const outcome = await c0.request<{ id?: string }>('POST', `/gofers/${p.goferId}/chat/messages`, {
            content,
          });
          run.sent.push({ kind: 'chat', party: p.name, content, outcome });
          await new Promise((r) => setTimeout(r, 150));
        }
      })(),
    );
    if (conversationId)
      for (const c of [c0, c1])
        workers.push(
          (async () => {
            while (!stopped) {
              const content = `${label} msg ${p.name} #${n++}`;
              const outcome = await c.request<{ id?: string }>(
                'POST',
                `/conversations/${conversationId}/messages`,
                {
                  content,
                },
              );
              run.sent.push({ kind: 'message', party: p.name, content, outcome });
              await pace();
            }
          })(),
        );
    workers.push(
      (async () => {
        while (!stopped) {
          run.reads.push(
            await c1.request<OanEventEnvelope[]>('GET', `/events?since=${p.startCursor}&limit=50`),
          );
          await pace();
        }
      })(),
    );
  }
  return {
    ...run,
    stop: async () => {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

/**
 * What a request during an outage may answer: a 2xx, a 5xx with the JSON `{error, code}` body, or a
 * connection error; never a 4xx (the load's requests are all valid), a hang past the bound, or a 5xx
 * without that body. Returns the offending outcomes, described.
 */
export function unclean(outcomes: Outcome[]): string[] {
  const bad: string[] = [];
  for (const o of outcomes) {
    if (o.status === 'connection-error') continue;
    if (o.status === 'timeout') {
      bad.push(`hung past the bound (${o.ms} ms)`);
      continue;
    }
    if (o.status < 400) continue;
    const body = o.body as { error?: unknown; code?: unknown } | undefined;
    const shaped = typeof body?.error === 'string' && typeof body.code === 'string';
    if (o.status >= 500 && shaped) continue;
    bad.push(`${o.status} ${o.text.slice(0, 200)}`);
  }
  return bad;
}

/** Counts of outcomes by status, for the report. */
export function tally(outcomes: Outcome[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of outcomes) out[String(o.status)] = (out[String(o.status)] ?? 0) + 1;
  return out;
}
