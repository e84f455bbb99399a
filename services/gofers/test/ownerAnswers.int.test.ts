import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@oan/db';
import { createKafka, SCHEMAS_DIR, SchemaRegistry, silentLogger, type KafkaHandle } from '@oan/kafka';
import { waitFor } from '@oan/testing';
import { ScriptedBrain } from '../src/brain/index.ts';
import { askOwnerForCaller } from '../src/commands/callerQuestions.ts';
import { createGofer } from '../src/commands/createGofer.ts';
import { postUserMessage } from '../src/commands/postUserMessage.ts';
import { startBrain } from '../src/reactors/brain.ts';
import { startOwnerAnswers } from '../src/reactors/ownerAnswers.ts';
import { markOwnerAnswersHanded, RelayOwnerAnswers } from '../src/infra/relayOwnerAnswers.ts';
import { relayReply } from '../src/relay/ownerQuestions.ts';
import { startGoferFleet, type GoferFleet } from './helpers.ts';
import { MemoryOwnerAnswers } from './ownerAnswersMemory.ts';

/**
 * A caller asks what only the owner can answer: the owner gets a `gofer_question`, the owner's next
 * message goes to the caller's channel once, and the brain leaves it alone.
 */
let fleet: GoferFleet;
let kafka: KafkaHandle;
const registry = new SchemaRegistry(SCHEMAS_DIR);
beforeAll(async () => {
  fleet = await startGoferFleet();
  kafka = createKafka({
    brokers: fleet.config.KAFKA_BROKERS,
    clientId: 'owner-answers-test',
    logger: silentLogger,
  });
});
afterAll(async () => {
  await kafka?.close();
  await fleet?.close();
});

interface Envelope {
  type: string;
  goferId: string;
  reply: { method: string; path: string };
  responseConstraints?: unknown;
  payload: { messageId: string; content: string; kind?: string; createdAt: string };
}
const envelopes = (accountId: string) =>
  sql<{ envelope: string }>(
    fleet.orm.em.fork(),
    'select envelope from read.oan_event where account_id = ? order by seq',
    [accountId],
  ).then((rows) => rows.map((r) => JSON.parse(r.envelope) as Envelope));
const questionsOf = async (accountId: string) =>
  (await envelopes(accountId)).filter((e) => e.type === 'gofer_question');
const chat = async (goferId: string) =>
  (await fleet.events())
    .filter((e) => e.streamId === `gofer-${goferId}` && e.type === 'ChatMessageAdded')
    .map((e) => e.data as { messageId: string; role: string; kind: string | null; replyTo: string | null });

describe('a Gofer asked for its owner by two callers, when the owner answers each in turn', () => {
  it('hands each answer to its caller once, one question at a time, and the brain stays out of it', async () => {
    const deps = {
      kafka,
      registry,
      orm: fleet.orm,
      ctx: fleet.ctx,
      logger: silentLogger,
      topicPrefix: fleet.config.TOPIC_PREFIX,
    };
    const port = new MemoryOwnerAnswers();
    const answers = await startOwnerAnswers({ ...deps, channels: { a2a: port } });
    const brain = await startBrain({ ...deps, provider: new ScriptedBrain(), backoffMs: 10 });
    try {
      const { accountId } = await fleet.account('dsh');
      const { goferId } = await createGofer(fleet.ctx, { accountId });
      const ask = (n: number) =>
        askOwnerForCaller(fleet.ctx, {
          goferId,
          channel: 'a2a',
          caller: `agent-${n}`,
          callerText: `Caller ${n}: is your owner free on Friday?`,
          question: 'A caller asks when you are available. When are you free?',
          taskId: `task-${n}`,
        });
      const first = await ask(1);
      const second = await ask(2);
      expect([first.askedNow, second.askedNow]).toEqual([true, false]);

      // The first question reaches the owner as GET /events serves it; the second waits its turn.
      const [q1] = await waitFor(async () => {
        const qs = await questionsOf(accountId);
        return qs.length > 0 && qs;
      });
      expect(q1).toMatchObject({
        type: 'gofer_question',
        goferId,
        reply: { method: 'POST', path: `/api/v1/gofers/${goferId}/chat/messages` },
        responseConstraints: { format: 'freestyle' },
        payload: { messageId: first.messageId, kind: 'caller_question' },
      });
      expect(q1!.payload.content).toContain('"Caller 1: is your owner free on Friday?"');

      const post = (content: string) =>
        postUserMessage(fleet.ctx, { accountId, goferId, content, attachmentsEnabled: false });
      const a1 = await post('Friday after 3pm.');
      await waitFor(() => port.calls.length === 1);
      expect(port.calls[0]).toEqual({
        goferId,
        questionMessageId: first.messageId,
        taskId: 'task-1',
        caller: 'agent-1',
        channel: 'a2a',
        answer: 'Friday after 3pm.',
        answeredAt: expect.any(String),
      });

      // Once the first is answered, the second is asked; the next message answers it.
      const q2 = await waitFor(async () => (await questionsOf(accountId))[1]);
      expect(q2.payload).toMatchObject({ messageId: second.messageId, kind: 'caller_question' });
      expect(q2.payload.content).toContain('"Caller 2: is your owner free on Friday?"');
      const a2 = await post('Not this week.');
      await waitFor(() => port.calls.length === 2);
      expect(port.calls[1]).toMatchObject({ taskId: 'task-2', caller: 'agent-2', answer: 'Not this week.' });

      // An ordinary message afterwards is an interview turn again: once the brain replied to it, it
      // had read the answers before it, and replied to neither (the acknowledgements did).
      const plain = await post('I want a backend engineer');
      const rows = await waitFor(async () => {
        const all = await chat(goferId);
        return all.some((m) => m.replyTo === plain.messageId) && all;
      });
      const repliesTo = (id: string) => rows.filter((m) => m.replyTo === id).map((m) => m.kind);
      expect(repliesTo(a1.messageId)).toEqual(['caller_answer']);
      expect(repliesTo(a2.messageId)).toEqual(['caller_answer']);
      expect(repliesTo(plain.messageId)).toEqual([null]);
      expect(port.calls).toHaveLength(2);
    } finally {
      await brain.stop();
      await answers.stop();
    }

    // Every record delivered again (a new consumer group reads the topic from its start): the
    // answered questions call nothing more.
    const replay = new MemoryOwnerAnswers();
    const again = await startOwnerAnswers({ ...deps, channels: { a2a: replay }, groupSuffix: '.replay' });
    try {
      const { accountId } = await fleet.account('dsh');
      const { goferId } = await createGofer(fleet.ctx, { accountId });
      // A marker after everything: once its answer arrives, the replay has passed the old records.
      const marker = await askOwnerForCaller(fleet.ctx, {
        goferId,
        channel: 'a2a',
        caller: 'agent-marker',
        callerText: 'How much?',
        question: 'A caller asks about your prices.',
        taskId: 'task-marker',
      });
      await postUserMessage(fleet.ctx, { accountId, goferId, content: '100', attachmentsEnabled: false });
      await waitFor(() => replay.calls.length > 0);
      expect(replay.calls.map((c) => c.questionMessageId)).toEqual([marker.messageId]);
    } finally {
      await again.stop();
    }
  });
});

describe('a caller whose task ended before the owner answered', () => {
  it('gets nothing, and the owner is told the answer was not passed on', async () => {
    const deps = {
      kafka,
      registry,
      orm: fleet.orm,
      ctx: fleet.ctx,
      logger: silentLogger,
      topicPrefix: fleet.config.TOPIC_PREFIX,
    };
    const port = new MemoryOwnerAnswers();
    port.gone.add('task-gone');
    const answers = await startOwnerAnswers({ ...deps, channels: { a2a: port }, groupSuffix: '.gone' });
    try {
      const { accountId } = await fleet.account('dsh');
      const { goferId } = await createGofer(fleet.ctx, { accountId });
      await askOwnerForCaller(fleet.ctx, {
        goferId,
        channel: 'a2a',
        caller: 'agent-gone',
        callerText: 'Call me back?',
        question: 'A caller asks how to reach you.',
        taskId: 'task-gone',
      });
      await postUserMessage(fleet.ctx, { accountId, goferId, content: 'Sure', attachmentsEnabled: false });
      const ack = await waitFor(async () =>
        (await envelopes(accountId)).find(
          (e) => e.type === 'gofer_message' && e.payload.content.includes('no longer'),
        ),
      );
      expect(ack.payload.content).toBe('They were no longer waiting, so your answer was not passed on.');
    } finally {
      await answers.stop();
    }
  });
});

describe('a relay caller who asked for the owner, when it speaks to the Gofer again', () => {
  it("hears the owner's answer first, once, and another caller never hears it", async () => {
    const deps = {
      kafka,
      registry,
      orm: fleet.orm,
      ctx: fleet.ctx,
      logger: silentLogger,
      topicPrefix: fleet.config.TOPIC_PREFIX,
    };
    const channel = new RelayOwnerAnswers(fleet.orm);
    const answers = await startOwnerAnswers({ ...deps, channels: { relay: channel }, groupSuffix: '.relay' });
    try {
      const { accountId } = await fleet.account('dsh');
      const { goferId } = await createGofer(fleet.ctx, { accountId });
      const brain = new ScriptedBrain();
      const caller = `0x${'ab'.repeat(32)}`;
      const turn = (who: string, prompt: string) => ({ caller: who, history: [], prompt });
      const speak = async (who: string, prompt: string) => {
        const t = turn(who, prompt);
        const out = await brain.answerCaller({
          gofer: { goferId, locale: 'en', name: 'Scout', description: 'd', values: [], demands: [] },
          caller: who,
          history: [],
          message: prompt,
        });
        const reply = await relayReply(fleet.ctx, { goferId, locale: 'en', turn: t, out });
        await markOwnerAnswersHanded(fleet.orm.em.fork(), reply.handed, new Date().toISOString());
        return reply.content;
      };

      expect(await speak(caller, 'Is your owner available on Friday?')).toContain(
        "I'll ask my owner and come back to you",
      );
      const q = await waitFor(async () => (await questionsOf(accountId))[0]);
      expect(q.payload.content).toContain('on the agent relay');
      await postUserMessage(fleet.ctx, {
        accountId,
        goferId,
        content: 'Yes, after 3pm.',
        attachmentsEnabled: false,
      });
      const ack = await waitFor(async () =>
        (await envelopes(accountId)).find((e) => e.payload.content.includes('passed your answer on')),
      );
      expect(ack.type).toBe('gofer_message');

      expect(await speak(`0x${'cd'.repeat(32)}`, 'Hello?')).not.toContain('after 3pm');
      const next = await speak(caller, 'Hello again');
      expect(next).toMatch(/^My owner answered your earlier question: "Yes, after 3pm."\n\n/);
      expect(await speak(caller, 'And now?')).not.toContain('after 3pm');
      // The port again (a reactor that died before recording) keeps one answer, told once.
      await channel.answered({
        goferId,
        questionMessageId: q.payload.messageId,
        taskId: caller,
        caller,
        channel: 'relay',
        answer: 'Yes, after 3pm.',
        answeredAt: new Date().toISOString(),
      });
      expect(await speak(caller, 'Anything else?')).not.toContain('after 3pm');
    } finally {
      await answers.stop();
    }
  });
});

describe('a Gofer with ten questions for its owner open, when a relay caller asks another', () => {
  it('tells the caller the owner is busy and asks nothing more', async () => {
    const { accountId } = await fleet.account('dsh');
    const { goferId } = await createGofer(fleet.ctx, { accountId });
    for (let n = 0; n < 10; n++) {
      await askOwnerForCaller(fleet.ctx, {
        goferId,
        channel: 'a2a',
        caller: `agent-${n}`,
        callerText: 'How much?',
        question: 'A caller asks about your prices.',
        taskId: `task-${n}`,
      });
    }
    const caller = `0x${'ef'.repeat(32)}`;
    const reply = await relayReply(fleet.ctx, {
      goferId,
      locale: 'en',
      turn: { caller, history: [], prompt: 'What is your price?' },
      out: {
        content: "I'll ask my owner and come back to you.",
        askOwner: 'A caller asks about your prices.',
      },
    });
    expect(reply).toEqual({
      content: 'My owner has many questions waiting already. Please ask again later.',
      handed: [],
    });
    const asked = (await fleet.events()).filter(
      (e) => e.streamId === `gofer-${goferId}` && e.type === 'CallerQuestionAsked',
    );
    expect(asked).toHaveLength(10);
  });
});
