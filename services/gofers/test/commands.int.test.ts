import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAssistantTurn } from '../src/commands/assistantTurn.ts';
import { WRITE_SOURCE } from '../src/commands/context.ts';
import { appendGoferEvents } from './appendEvents.ts';
import { createGofer } from '../src/commands/createGofer.ts';
import { deleteGofer } from '../src/commands/deleteGofer.ts';
import { postUserMessage } from '../src/commands/postUserMessage.ts';
import type { GoferEvent } from '@oan/domain';
import { placeholderTexts } from '../src/domain/goferTexts.ts';
import { startGoferFleet, type GoferFleet } from './helpers.ts';

let fleet: GoferFleet;
beforeAll(async () => {
  fleet = await startGoferFleet();
});
afterAll(async () => fleet?.close());

const streamOf = async (goferId: string) =>
  (await fleet.events()).filter((e) => e.streamId === `gofer-${goferId}`);

async function newGofer(platform = 'other', extra: { locale?: string; humanReviewTriggers?: string[] } = {}) {
  const { accountId } = await fleet.account(platform);
  const created = await createGofer(fleet.ctx, { accountId, ...extra });
  return { accountId, ...created };
}

async function userMessage(accountId: string, goferId: string, content = 'I want a co-founder') {
  return postUserMessage(fleet.ctx, { accountId, goferId, content, attachmentsEnabled: false });
}

const turn = (
  goferId: string,
  replyTo: string | null,
  extra: Partial<Parameters<typeof addAssistantTurn>[1]> = {},
) =>
  addAssistantTurn(fleet.ctx, {
    goferId,
    replyTo,
    content: 'What should I call you?',
    pendingQuery: false,
    responseConstraints: null,
    ...extra,
  });

describe('createGofer', () => {
  it('appends GoferCreated and the greeting in one append, and remembers the owner’s position', async () => {
    const g = await newGofer('dsh', { locale: 'zh-CN', humanReviewTriggers: ['money'] });
    const events = await streamOf(g.goferId);
    expect(events.map((e) => e.type)).toEqual(['GoferCreated', 'ChatMessageAdded']);
    expect(BigInt(events[1]!.position) - BigInt(events[0]!.position)).toBe(1n);
    expect(events[0]!.data).toMatchObject({
      goferId: g.goferId,
      accountId: g.accountId,
      chatId: g.chatId,
      locale: 'zh-CN',
      name: placeholderTexts('zh').name,
      sourcePlatform: 'dsh',
      humanReviewTriggers: ['money'],
    });
    expect(events[1]!.data).toMatchObject({ role: 'assistant', content: g.greeting, replyTo: null });
    expect(g.greeting).toBe(placeholderTexts('zh').greeting);
    expect(events.every((e) => e.partitionKey === g.accountId)).toBe(true);
    expect(await fleet.ctx.writes.required(g.accountId, WRITE_SOURCE)).toBe(BigInt(events[1]!.position));
  });

  it('gives a Gofer of an account the projector has not seen yet the platform `other`', async () => {
    const created = await createGofer(fleet.ctx, { accountId: 'not-projected-yet' });
    const [first] = await streamOf(created.goferId);
    expect(first!.data.sourcePlatform).toBe('other');
  });
});

describe('postUserMessage', () => {
  it('appends nothing when the message is refused', async () => {
    const g = await newGofer();
    const before = (await streamOf(g.goferId)).length;
    await expect(userMessage(g.accountId, g.goferId, '  ')).rejects.toMatchObject({ code: 'MESSAGE_EMPTY' });
    await expect(
      postUserMessage(fleet.ctx, {
        accountId: g.accountId,
        goferId: g.goferId,
        attachmentIds: ['x'],
        attachmentsEnabled: false,
      }),
    ).rejects.toMatchObject({ code: 'ATTACHMENTS_UNAVAILABLE' });
    await expect(userMessage('someone-else', g.goferId)).rejects.toMatchObject({ code: 'GOFER_FORBIDDEN' });
    await expect(userMessage(g.accountId, 'bad\u0000id')).rejects.toMatchObject({ code: 'GOFER_FORBIDDEN' });
    expect(await streamOf(g.goferId)).toHaveLength(before);
  });
});

describe('addAssistantTurn', () => {
  it('replies once per user message, even when two turns race for it', async () => {
    const g = await newGofer();
    const { messageId } = await userMessage(g.accountId, g.goferId);
    const results = await Promise.all([turn(g.goferId, messageId), turn(g.goferId, messageId)]);
    expect(results.filter((r) => r.appended)).toHaveLength(1);
    expect(await turn(g.goferId, messageId)).toEqual({ appended: false });
    const replies = (await streamOf(g.goferId)).filter((e) => e.data.replyTo === messageId);
    expect(replies).toHaveLength(1);
  });

  it('appends a changed profile and status before the message, in one append', async () => {
    const g = await newGofer();
    const { messageId } = await userMessage(g.accountId, g.goferId);
    const profile = { name: 'Ada', description: 'Looks for a CTO', values: ['candour'], demands: ['a CTO'] };
    const r = await turn(g.goferId, messageId, {
      pendingQuery: true,
      responseConstraints: { format: 'enum', enumOptions: ['yes', 'no'] },
      profile,
      discoveryStatus: 'ready_for_pairing',
    });
    expect(r.appended).toBe(true);
    const tail = (await streamOf(g.goferId)).slice(-3);
    expect(tail.map((e) => e.type)).toEqual([
      'GoferProfileUpdated',
      'GoferDiscoveryStatusChanged',
      'ChatMessageAdded',
    ]);
    expect(tail[0]!.data).toMatchObject(profile);
    expect(tail[2]!.data).toMatchObject({
      role: 'assistant',
      pendingQuery: true,
      responseConstraints: '{"format":"enum","enumOptions":["yes","no"]}',
      replyTo: messageId,
    });
    // The same profile again is not a change.
    const next = await userMessage(g.accountId, g.goferId, 'thanks');
    await turn(g.goferId, next.messageId, { profile, discoveryStatus: 'ready_for_pairing' });
    expect((await streamOf(g.goferId)).at(-1)!.type).toBe('ChatMessageAdded');
    expect((await streamOf(g.goferId)).at(-2)!.type).toBe('ChatMessageAdded');
  });

  it('appends nothing for a deleted or unknown Gofer', async () => {
    const g = await newGofer();
    const { messageId } = await userMessage(g.accountId, g.goferId);
    await deleteGofer(fleet.ctx, { accountId: g.accountId, goferId: g.goferId });
    const before = (await streamOf(g.goferId)).length;
    expect(await turn(g.goferId, messageId)).toEqual({ appended: false });
    expect(await turn('00000000-0000-4000-8000-000000000000', null)).toEqual({ appended: false });
    expect(await turn('bad id', null)).toEqual({ appended: false });
    expect(await streamOf(g.goferId)).toHaveLength(before);
  });
});

describe('deleteGofer', () => {
  it('returns the storage keys of the Gofer’s uploads; a second deletion is NOT_FOUND', async () => {
    const g = await newGofer();
    const added: GoferEvent = {
      type: 'AttachmentAdded',
      data: {
        goferId: g.goferId,
        accountId: g.accountId,
        attachmentId: fleet.ctx.ids(),
        kind: 'document',
        name: 'cv.txt',
        mimeType: 'text/plain',
        size: 12,
        width: null,
        height: null,
        storageKey: `${g.goferId}/abc`,
        ragStatus: 'processing',
        createdAt: new Date().toISOString(),
      },
    };
    await appendGoferEvents(fleet.ctx, g.goferId, g.accountId, [added]);
    await expect(deleteGofer(fleet.ctx, { accountId: 'intruder', goferId: g.goferId })).rejects.toMatchObject(
      {
        code: 'GOFER_FORBIDDEN',
      },
    );
    expect(await deleteGofer(fleet.ctx, { accountId: g.accountId, goferId: g.goferId })).toEqual({
      storageKeys: [`${g.goferId}/abc`],
    });
    await expect(
      deleteGofer(fleet.ctx, { accountId: g.accountId, goferId: g.goferId }),
    ).rejects.toMatchObject({
      code: 'GOFER_NOT_FOUND',
    });
    expect((await streamOf(g.goferId)).filter((e) => e.type === 'GoferDeleted')).toHaveLength(1);
  });
});
