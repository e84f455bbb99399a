import { describe, expect, it } from 'vitest';
import { InvalidReply, replyCall, replyCommandId, verdictOf } from '../src/domain/reply.ts';

const gofer = { type: 'gofer_question', goferId: 'g 1', chatId: 'c1' };

describe('a reply, routed by the envelope’s ids', () => {
  it('answers a Gofer’s message or question in its chat', () => {
    for (const type of ['gofer_message', 'gofer_question'])
      expect(replyCall({ ...gofer, type }, { content: 'yes', attachmentIds: ['a1'] })).toEqual({
        service: 'gofers',
        path: '/gofers/g%201/chat/messages',
        body: { content: 'yes', attachmentIds: ['a1'] },
        permission: 'message:send',
      });
  });

  it('confirms a pairing as the envelope’s Gofer, whatever roleId the worker names', () => {
    const env = { type: 'pair_proposed', goferId: 'g1', threadId: 't1' };
    expect(replyCall(env, { accepted: false })).toEqual({
      service: 'matching',
      path: '/threads/t1/pair/confirm',
      body: { roleId: 'g1', accepted: false },
      permission: 'pair:confirm',
    });
    expect(() => replyCall(env, { accepted: true, roleId: 'other' })).toThrow(InvalidReply);
    expect(() => replyCall(env, {})).toThrow(InvalidReply);
  });

  it('decides a match request by the payload’s request id', () => {
    const env = { type: 'match_request', goferId: 'g1', threadId: 't1', payload: { requestId: 'r1' } };
    expect(replyCall(env, { accept: true })).toMatchObject({
      service: 'matching',
      path: '/match-requests/r1/decision',
      body: { accept: true },
    });
  });

  it('answers a relay message in its conversation (top level first, then the payload)', () => {
    expect(replyCall({ type: 'relay_message', conversationId: 'k1' }, { content: 'hi' })).toMatchObject({
      service: 'conversations',
      path: '/conversations/k1/messages',
    });
    expect(
      replyCall({ type: 'relay_message', payload: { conversationId: 'k2' } }, { content: 'hi' }).path,
    ).toBe('/conversations/k2/messages');
  });

  it('refuses a field the route does not take, and a type without a reply', () => {
    expect(() => replyCall(gofer, { content: 'yes', mood: 'fine' })).toThrow(InvalidReply);
    expect(() => replyCall({ type: 'session_summary', goferId: 'g1' }, {})).toThrow(InvalidReply);
  });
});

describe('the owning service’s answer', () => {
  it('is done on 2xx, not known yet on 408, 429 and 5xx, refused on any other 4xx', () => {
    expect([200, 201, 202].map(verdictOf)).toEqual(['done', 'done', 'done']);
    expect([408, 429, 500, 503].map(verdictOf)).toEqual(['retry', 'retry', 'retry', 'retry']);
    expect([400, 403, 404, 409].map(verdictOf)).toEqual(['refused', 'refused', 'refused', 'refused']);
  });

  it('is sent under one command id per lease', () => {
    expect(replyCommandId('j1', 2)).toBe('runtimes/j1/2');
    expect(replyCommandId('j1', 3)).not.toBe(replyCommandId('j1', 2));
  });
});
