import type { DeviceKey } from '../sealed/keyStore';
import type { ConversationKey } from '../sealed/sealing';
import type { KeyChange } from '../sealed/useConversationKeys';
import { useAction } from '../useAction';
import { ErrorLine } from './Layout';

/**
 * Both sides' key fingerprints, to compare out of band, and a warning when the other side's keys
 * changed since the operator last accepted them.
 */
export function KeyPanel({
  me,
  counterpart,
  keys,
  mine,
  change,
  accept,
}: {
  me: string;
  counterpart: string;
  keys: ConversationKey[];
  mine: DeviceKey | null;
  change: KeyChange | null;
  accept: () => Promise<void>;
}) {
  const { busy, error, run } = useAction();
  const yours = keys.filter((k) => k.accountId === me);
  const theirs = keys.filter((k) => k.accountId !== me);
  return (
    <section class="keys" aria-labelledby="keys-h">
      <h2 id="keys-h">Fingerprints</h2>
      {change ? (
        <div class="callout" role="alert">
          <p>
            <strong>{counterpart}'s keys changed.</strong> Compare the fingerprints with them again, in person
            or on a call, before you trust a new key.
          </p>
          <ul aria-label="Changed keys">
            {change.added.map((k) => (
              <li key={k.keyId}>
                New: <code>{k.fingerprint}</code>
              </li>
            ))}
            {change.removed.map((k) => (
              <li key={k.keyId}>
                Retired: <code>{k.fingerprint}</code>
              </li>
            ))}
          </ul>
          <button type="button" disabled={busy} onClick={() => void run(accept)}>
            I have compared them
          </button>
          <ErrorLine error={error} />
        </div>
      ) : null}
      <p class="muted">
        Messages are sealed to these keys. Compare them with what {counterpart} sees, outside this page.
      </p>
      <div class="keycols">
        <div>
          <h3>Yours</h3>
          <ul class="fingerprints" aria-label="Your keys">
            {yours.map((k) => (
              <li key={k.keyId}>
                <code>{k.fingerprint}</code>
                {k.keyId === mine?.keyId ? <span class="muted"> (this browser)</span> : null}
              </li>
            ))}
          </ul>
        </div>
        <div>
          <h3>{counterpart}'s</h3>
          {theirs.length ? (
            <ul class="fingerprints" aria-label="Their keys">
              {theirs.map((k) => (
                <li key={k.keyId}>
                  <code>{k.fingerprint}</code>
                </li>
              ))}
            </ul>
          ) : (
            <p>None yet.</p>
          )}
        </div>
      </div>
    </section>
  );
}
