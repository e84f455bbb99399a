import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { envelopeSchema, OAN_EVENT_TYPES, OAN_MESSAGE_SOURCES, serializeEnvelope } from '@oan/protocol';
import { envelopeEventId, envelopeText, toEnvelope, toNotification } from '../src/notifications.ts';

const spec = {
  recipient: 'acc-1',
  type: 'system_notice' as const,
  source: 'platform' as const,
  payload: { kind: 'account_banned' },
  createdAt: '2026-11-29T08:00:00.000Z',
};

describe('an OAN notification', () => {
  it('gets the same eventId from the same source event, recipient and type', () => {
    const a = toNotification('e1', spec);
    const b = toNotification('e1', spec);
    expect(a.eventId).toBe(b.eventId);
    expect(a.eventId).toBe(envelopeEventId('e1', 'acc-1', 'system_notice'));
  });

  it('keeps the ids already on the log: the UUIDv5 of the name in the fixed namespace', () => {
    // Pinned: a change here would give every replayed envelope a new eventId.
    expect(envelopeEventId('e1', 'acc-1', 'system_notice')).toBe('582db238-1cef-5e35-92c8-b6485ec60279');
    expect(envelopeEventId('e1', 'acc-1', 'system_notice', 'ä')).toBe('17af1665-1c19-5b4b-a7af-ab82a71a4e49');
  });

  it('gets a different eventId for another recipient or another source event', () => {
    const base = toNotification('e1', spec).eventId;
    expect(toNotification('e1', { ...spec, recipient: 'acc-2' }).eventId).not.toBe(base);
    expect(toNotification('e2', spec).eventId).not.toBe(base);
  });

  it("tells apart one event's two notifications of one type to one account by the discriminator", () => {
    const base = toNotification('e1', spec).eventId;
    const g1 = toNotification('e1', { ...spec, discriminator: 'g1' }).eventId;
    const g2 = toNotification('e1', { ...spec, discriminator: 'g2' }).eventId;
    expect(new Set([base, g1, g2]).size).toBe(3);
    expect(g1).toBe(envelopeEventId('e1', 'acc-1', 'system_notice', 'g1'));
  });

  it('becomes a valid wire envelope with absent optional keys omitted, never null', () => {
    const env = toEnvelope(toNotification('e1', spec), 7n);
    expect(envelopeSchema.parse(env)).toEqual(env);
    expect(env.seq).toBe('7');
    expect(Object.keys(env)).toEqual(['v', 'seq', 'eventId', 'type', 'source', 'payload', 'createdAt']);
  });

  it('emits reply as an absolute /api/v1 path and keeps the ids it was given', () => {
    const n = toNotification('e1', {
      ...spec,
      type: 'gofer_message',
      source: 'own_gofer',
      goferId: 'g1',
      chatId: 'c1',
      reply: '/gofers/g1/chat/messages',
    });
    const env = toEnvelope(n, 1n);
    expect(env.reply).toEqual({ method: 'POST', path: '/api/v1/gofers/g1/chat/messages' });
    expect(env.goferId).toBe('g1');
  });

  it('serializes to the same bytes every time (replay is byte-identical)', () => {
    const n = toNotification('e1', { ...spec, payload: { b: 1, a: { y: 2, x: 1 } } });
    expect(envelopeText(n, 3n)).toBe(envelopeText(structuredClone(n), 3n));
    expect(envelopeText(n, 3n)).toBe(
      `{"v":1,"seq":"3","eventId":"${n.eventId}","type":"system_notice","source":"platform","payload":{"b":1,"a":{"y":2,"x":1}},"createdAt":"2026-11-29T08:00:00.000Z"}`,
    );
  });

  it('writes the bytes serializeEnvelope gives the envelope, whatever the payload and fields', () => {
    const text = fc.string({ unit: 'grapheme' });
    const maybe = fc.option(text, { nil: undefined });
    fc.assert(
      fc.property(
        fc.record({
          type: fc.constantFrom(...OAN_EVENT_TYPES),
          source: fc.constantFrom(...OAN_MESSAGE_SOURCES),
          payload: fc.dictionary(fc.string({ unit: 'grapheme' }), fc.jsonValue()),
          goferId: maybe,
          chatId: maybe,
          threadId: maybe,
          conversationId: maybe,
          responseConstraints: fc.option(
            fc.record({
              format: fc.constantFrom('freestyle' as const, 'enum' as const),
              enumOptions: fc.array(text),
            }),
            { nil: undefined },
          ),
          reply: fc.option(
            text.map((t) => `/x/${t}`),
            { nil: undefined },
          ),
          webUrl: maybe,
          createdAt: fc.constant('2026-12-05T08:00:00.000Z'),
        }),
        fc.bigInt({ min: 1n, max: 2n ** 63n }),
        (fields, seq) => {
          const n = toNotification('e1', { ...spec, ...fields });
          expect(envelopeText(n, seq)).toBe(serializeEnvelope(toEnvelope(n, seq)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
