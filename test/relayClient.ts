import { connect, address as coAddress } from 'connectonion';

type Remote = ReturnType<typeof connect>;
type WsCtor = NonNullable<NonNullable<Parameters<typeof connect>[1]>['wsCtor']>;

/**
 * The unmodified npm `connectonion` client, with the frames the relay sent it recorded: the client
 * ignores an ERROR while it waits for CONNECTED, so a refused or lost CONNECT would otherwise fail as a
 * bare "Authentication timed out". A failed turn says what the client received and, from `explain`,
 * what the test can tell of the relay's state.
 */
export function relayClient(agent: string, relayUrl: string, explain?: () => Promise<string>) {
  const received: string[] = [];
  class Recording extends WebSocket {
    constructor(url: string | URL) {
      super(url);
      this.addEventListener('message', (e) => received.push(String(e.data).slice(0, 200)));
    }
  }
  // The library's own structural type of a WebSocket, which the DOM class matches at run time.
  const remote: Remote = connect(agent, {
    relayUrl,
    keys: coAddress.generate(),
    wsCtor: Recording as unknown as WsCtor,
  });
  return {
    remote,
    received,
    async input(prompt: string, opts: { timeoutMs: number }) {
      try {
        return await remote.input(prompt, opts);
      } catch (err) {
        const more = explain ? `; ${await explain().catch((e: unknown) => String(e))}` : '';
        throw new Error(
          `${(err as Error).message} asking ${agent} via ${relayUrl} (the client got ${JSON.stringify(received)}${more})`,
          { cause: err },
        );
      }
    },
  };
}
