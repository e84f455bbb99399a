import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { toKafkaMessage, type RunningReactor } from '@oan/kafka';
import { expectError, form, png, waitFor } from '@oan/testing';
import { startGoferDeleted, startOpener } from '../src/reactors/lifecycle.ts';
import { acceptedDecision, startConversationFleet, type ConversationFleet } from './helpers.ts';

let f: ConversationFleet;
let reactors: RunningReactor[] = [];
const topic = (name: string) => `${f.fleet.baseEnv.TOPIC_PREFIX}${name}`;

beforeAll(async () => {
  f = await startConversationFleet();
  await f.fleet.kafka.ensureTopics([{ topic: topic('matching.events') }, { topic: topic('gofers.events') }]);
  const deps = {
    kafka: f.fleet.kafka,
    registry: f.fleet.registry,
    ctx: f.ctx,
    logger: f.fleet.logger,
    topicPrefix: f.fleet.baseEnv.TOPIC_PREFIX!,
  };
  reactors = [await startOpener(deps), await startGoferDeleted({ ...deps, storage: f.storage })];
}, 90_000);
afterAll(async () => {
  for (const r of reactors) await r.stop();
  await f?.fleet.kafka
    .deleteTopics([topic('matching.events'), topic('gofers.events')])
    .catch(() => undefined);
  // The reactors' consumer groups too: nothing of this file's stays on the shared broker.
  await (
    await f?.fleet.kafka.admin()
  )
    ?.deleteGroups([topic('conversations.opener'), topic('conversations.gofer-deleted')])
    .catch(() => undefined);
  await f?.close();
});

async function produce(name: string, key: string, type: string, data: Record<string, unknown>) {
  const producer = await f.fleet.kafka.producer();
  await producer.send({
    topic: topic(name),
    messages: [toKafkaMessage(f.fleet.registry, { key, type, data })],
  });
}

const conversationRow = async (id: string) =>
  (
    await sql<{ status: string }>(
      f.orm.em.fork(),
      'select status from conversations.conversations where id = ?',
      [id],
    )
  )[0];

describe('the opener reactor (matching.events)', () => {
  it('opens the conversation of an accepted match once, however often the decision is delivered', async () => {
    const m = await f.match({ open: false });
    const decided = acceptedDecision(m);
    await produce('matching.events', m.a.accountId, 'MatchRequestDecided', decided);
    await produce('matching.events', m.a.accountId, 'MatchRequestDecided', decided);
    // A rejection opens nothing.
    const rejected = { ...decided, conversationId: randomUUID(), status: 'rejected', matchId: null };
    await produce('matching.events', m.a.accountId, 'MatchRequestDecided', {
      ...rejected,
      conversationId: null,
    });
    await waitFor(async () => (await conversationRow(m.conversationId))?.status === 'open', {
      what: 'opened',
    });
    const res = await f.app.inject({
      method: 'POST',
      url: `/api/v1/conversations/${m.conversationId}/messages`,
      headers: m.b.headers,
      payload: { content: 'hello' },
    });
    expect(res.statusCode).toBe(201);
    await new Promise((r) => setTimeout(r, 500));
    const opened = (await f.events()).filter(
      (e) => e.type === 'ConversationOpened' && e.data.conversationId === m.conversationId,
    );
    expect(opened).toHaveLength(1);
    expect(opened[0]!.data).toMatchObject({
      accountA: m.a.accountId,
      accountB: m.b.accountId,
      matchId: m.matchId,
    });
  });
});

describe('the gofer-deleted reactor (gofers.events)', () => {
  it('closes a deleted Gofer’s conversations: every route answers 403 and its files are gone', async () => {
    const m = await f.match();
    const file0 = form('a.png', 'image/png', png(2, 2));
    const up = await f.app.inject({
      method: 'POST',
      url: `/api/v1/conversations/${m.conversationId}/attachments`,
      headers: { ...m.a.headers, ...file0.headers },
      payload: file0.payload,
    });
    expect(up.statusCode).toBe(201);
    const { attachmentId } = JSON.parse(up.body).attachment as { attachmentId: string };
    const file = join(f.storage.dir, 'objects', 'conversations', m.conversationId, attachmentId);
    expect(existsSync(file)).toBe(true);
    const untouched = await f.match();
    await produce('gofers.events', m.b.accountId, 'GoferDeleted', {
      goferId: m.b.goferId,
      accountId: m.b.accountId,
      deletedAt: new Date().toISOString(),
    });
    await waitFor(async () => (await conversationRow(m.conversationId))?.status === 'closed', {
      what: 'closed',
    });
    for (const who of [m.a, m.b]) {
      expectError(
        await f.app.inject({
          method: 'GET',
          url: `/api/v1/conversations/${m.conversationId}/messages`,
          headers: who.headers,
        }),
        403,
        'FORBIDDEN',
      );
    }
    await waitFor(
      async () => {
        const [row] = await sql<{ deleted_at: string | null }>(
          f.fleet.projectorOrm.em.fork(),
          'select deleted_at from read.conversation_attachments where conversation_id = ?',
          [m.conversationId],
        );
        return !!row?.deleted_at;
      },
      { what: 'projected deletion' },
    );
    expect((await conversationRow(untouched.conversationId))?.status).toBe('open');
    await waitFor(() => !existsSync(file), { what: 'the file deleted' });
    const closedEvents = (await f.events()).filter((e) => e.type === 'ConversationClosed');
    expect(closedEvents).toHaveLength(1);
    expect(closedEvents[0]!.partitionKey).toBe(m.a.accountId);
  });
});
