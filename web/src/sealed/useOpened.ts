import { useState } from 'preact/hooks';
import type { ConversationMessage } from '../api/client';
import { useLoad } from '../useLoad';
import type { DeviceKey } from './keyStore';
import { openMessage, type Opened } from './sealing';

/** The messages as this browser reads them, by id: sealed ones opened with the keys it holds. */
export function useOpened(
  messages: ConversationMessage[] | null,
  conversationId: string,
  me: string,
  myKeys: readonly DeviceKey[] | null,
): ReadonlyMap<string, Opened> {
  const [opened, setOpened] = useState<ReadonlyMap<string, Opened>>(new Map());
  useLoad(
    async (latest) => {
      // Until this browser's keys are read, sealed messages show as being opened.
      if (myKeys === null) return;
      const read = await Promise.all(
        (messages ?? []).map(async (m) => [m.id, await openMessage(m, conversationId, me, myKeys)] as const),
      );
      if (latest()) setOpened(new Map(read));
    },
    [messages, myKeys],
  );
  return opened;
}
