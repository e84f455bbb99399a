import { useState } from 'preact/hooks';
import { useEventCount } from '../live';
import { useLoad } from '../useLoad';
import { ensureDeviceKey } from './deviceKey';
import { checkedKeys, keysOf, saveCheckedKeys, type CheckedKey, type DeviceKey } from './keyStore';
import { canSeal } from './lib';
import { conversationKeys, type ConversationKey } from './sealing';

/** How the other side's keys differ from the ones the operator last accepted here. */
export interface KeyChange {
  added: CheckedKey[];
  removed: CheckedKey[];
}

export interface ConversationKeys {
  /** This browser's current key (published), and every key it holds (older messages open with them). */
  mine: DeviceKey | null;
  /** null until read from this browser's store. */
  myKeys: DeviceKey[] | null;
  /** Both sides' current keys; null until read. */
  keys: ConversationKey[] | null;
  change: KeyChange | null;
  /** The operator compared the new keys: they become the accepted ones. */
  accept: () => Promise<void>;
  error: string | null;
}

/** A `system_notice` saying the other side of this conversation published or retired a key. */
const keyNotice = (conversationId: string) => (e: { type: string; payload: Record<string, unknown> }) =>
  e.type === 'system_notice' &&
  e.payload.kind === 'conversation_key_changed' &&
  e.payload.conversationId === conversationId;

/**
 * The conversation's keys: on first opening, this browser's key is made and published; both sides'
 * current keys are read, and again whenever the other side's change (a `conversation_key_changed`
 * notice). The first keys seen of the other side are accepted as they are; any later difference is
 * a change to warn of until the operator accepts it.
 */
export function useConversationKeys(conversationId: string, me: string): ConversationKeys {
  const [mine, setMine] = useState<DeviceKey | null>(null);
  const [myKeys, setMyKeys] = useState<DeviceKey[] | null>(null);
  const [keys, setKeys] = useState<ConversationKey[] | null>(null);
  const [change, setChange] = useState<KeyChange | null>(null);
  const [error, setError] = useState<string | null>(null);
  const notices = useEventCount(keyNotice(conversationId));

  useLoad(
    async (latest) => {
      if (!canSeal()) {
        setMyKeys([]);
        return;
      }
      try {
        let key = await ensureDeviceKey(me);
        let read = await conversationKeys(conversationId);
        if (!read.some((k) => k.keyId === key.keyId)) {
          // Retired meanwhile (from another device): publishing again makes a new key.
          key = await ensureDeviceKey(me, true);
          read = await conversationKeys(conversationId);
        }
        const theirs = read.filter((k) => k.accountId !== me);
        let accepted = await checkedKeys(me, conversationId);
        if (!accepted?.length) {
          await saveCheckedKeys(me, conversationId, theirs);
          accepted = theirs;
        }
        const all = await keysOf(me);
        if (!latest()) return;
        setMine(key);
        setMyKeys(all);
        setKeys(read);
        setChange(differ(accepted, theirs));
        setError(null);
      } catch (err) {
        // The keys this browser holds still open what was sealed to them.
        const all = await keysOf(me).catch(() => []);
        if (!latest()) return;
        setMyKeys(all);
        setError(`Sealed messages are not available: ${(err as Error).message}`);
      }
    },
    [conversationId, me, notices],
  );

  const accept = async () => {
    const theirs = (keys ?? []).filter((k) => k.accountId !== me);
    await saveCheckedKeys(me, conversationId, theirs);
    setChange(null);
  };
  return { mine, myKeys, keys, change, accept, error };
}

function differ(accepted: CheckedKey[], now: CheckedKey[]): KeyChange | null {
  const added = now.filter((k) => !accepted.some((a) => a.keyId === k.keyId));
  const removed = accepted.filter((a) => !now.some((k) => k.keyId === a.keyId));
  return added.length || removed.length ? { added, removed } : null;
}
