import pg from 'pg';
import type { OanEventEnvelope } from '@oan/protocol';
import { waitFor, type TestConnector } from '@oan/testing';

/** Every row of the event table, in a stable order, as text: what "byte for byte" compares. */
export async function dumpEventTable(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const r = await client.query<{ line: string }>(
      `select account_id || '|' || seq || '|' || event_id || '|' || type || '|' || envelope || '|' || created_at::text as line
         from read.oan_event order by account_id, seq`,
    );
    return r.rows.map((row) => row.line);
  } finally {
    await client.end();
  }
}

/** Every row of each table as JSON text, in primary-key order: a replay must reproduce them. */
export async function dumpTables(databaseUrl: string, tables: string[]): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const out: Record<string, string[]> = {};
    for (const t of tables) {
      const r = await client.query<{ row: string }>(`select to_jsonb(x)::text as row from ${t} x order by 1`);
      out[t] = r.rows.map((row) => row.row);
    }
    return out;
  } finally {
    await client.end();
  }
}

/** Runs statements against the fleet's database (to damage read models a replay must rebuild). */
export async function corrupt(databaseUrl: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * Drives the scripted brain's interview as a connector would: answers each follow-up from `answers`,
 * answers every `gofer_question` through its `reply` path with "yes", until the Gofer is
 * `ready_for_pairing`. Returns the ids of the questions answered.
 */
export async function interviewToReady(
  c: TestConnector,
  goferId: string,
  answers: string[],
): Promise<Set<string>> {
  const answered = new Set<string>();
  for (let turn = 0; turn < 14; turn++) {
    const list = await c.rest<{ goferId: string; discoveryStatus: string }[]>('GET', '/gofers');
    if (list.body.find((g) => g.goferId === goferId)?.discoveryStatus === 'ready_for_pairing')
      return answered;
    const question = c.delivered.find(
      (e: OanEventEnvelope) =>
        e.type === 'gofer_question' && e.goferId === goferId && !answered.has(e.eventId),
    );
    const before = c.delivered.length;
    if (question) {
      answered.add(question.eventId);
      await c.rest('POST', question.reply!.path.replace(/^\/api\/v1/, ''), { content: 'yes' });
    } else {
      await c.rest('POST', `/gofers/${goferId}/chat/messages`, {
        content: answers[Math.min(turn, answers.length - 1)],
      });
    }
    await waitFor(() => c.delivered.length > before, { timeoutMs: 10_000, what: `the Gofer's turn ${turn}` });
  }
  throw new Error(`Gofer ${goferId} did not reach ready_for_pairing`);
}
