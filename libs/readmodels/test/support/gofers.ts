import { goferStreamId, type GoferEvent } from '@oan/domain';
import { at, eventBuilders } from './events.ts';

/** A gofers context with one account and one Gofer; every builder defaults to them. */
export function gofersOf(accountId: string, goferId: string) {
  const owner = { goferId, accountId };
  return eventBuilders<GoferEvent>(
    {
      GoferCreated: () => ({
        ...owner,
        chatId: 'chat-1',
        locale: 'en',
        name: 'New Gofer',
        description: 'd',
        sourcePlatform: 'dsh',
        humanReviewTriggers: ['money'],
        createdAt: at(0),
      }),
      ChatMessageAdded: () => ({
        ...owner,
        chatId: 'chat-1',
        messageId: 'm1',
        role: 'assistant',
        content: 'Hello!',
        attachmentIds: [],
        kind: null,
        pairing: null,
        pendingQuery: false,
        responseConstraints: null,
        replyTo: null,
        createdAt: at(1),
      }),
      GoferProfileUpdated: () => ({
        ...owner,
        name: 'Hiring Gofer',
        description: 'A team',
        values: ['remote'],
        demands: ['backend'],
        updatedAt: at(4),
      }),
      GoferDiscoveryStatusChanged: () => ({ ...owner, status: 'ready_for_pairing', changedAt: at(5) }),
      GoferDeleted: () => ({ ...owner, deletedAt: at(9) }),
      AttachmentAdded: () => ({
        ...owner,
        attachmentId: 'att-1',
        kind: 'photo',
        name: 'me.png',
        mimeType: 'image/png',
        size: 2048,
        width: 10,
        height: 20,
        storageKey: `gofers/${goferId}/att-1`,
        ragStatus: 'processing',
        createdAt: at(6),
      }),
      AttachmentRagStatusChanged: () => ({
        ...owner,
        attachmentId: 'att-1',
        ragStatus: 'ready',
        knowledge: 'a photo',
        changedAt: at(7),
      }),
      GoferRelayPublished: () => ({ ...owner, address: '0xabc', publishedAt: at(8) }),
      GoferRelayUnpublished: () => ({ ...owner, address: '0xabc', unpublishedAt: at(8) }),
      GoferA2APublished: () => ({ ...owner, publishedAt: at(9) }),
      GoferA2AUnpublished: () => ({ ...owner, unpublishedAt: at(9) }),
    },
    ({ data }) => ({ streamId: goferStreamId(data.goferId), accountId: data.accountId }),
  );
}
