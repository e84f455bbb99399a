import { useEffect, useState } from 'preact/hooks';
import { api, need, type ApiKey } from '../api/client';
import { ErrorLine, when } from '../components/Layout';
import { ConfirmButton } from '../components/ConfirmButton';
import { useAction } from '../useAction';

/** The account's connector keys (metadata only) with revoke, and a pairing code to paste. */
export function ConnectorsPage() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [code, setCode] = useState<{ code: string; expiresAt: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();

  const load = async () => {
    try {
      setKeys(need(await api.GET('/api/v1/api-keys'), 'api keys'));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  useEffect(() => void load(), []);

  const pair = () =>
    run(async () => setCode(need(await api.POST('/api/v1/auth/oan/pairing-codes', {}), 'pairing code')));
  const revoke = (apiKeyId: string) =>
    run(async () => {
      need(await api.DELETE('/api/v1/api-keys/{apiKeyId}', { params: { path: { apiKeyId } } }), 'revoke');
      setConfirming(null);
      await load();
    });

  return (
    <>
      <h1 tabIndex={-1}>Connectors</h1>
      <ErrorLine error={error} />
      <section aria-labelledby="pair">
        <h2 id="pair">Pair a connector</h2>
        <p>
          A pairing code lets one connector (an agent platform) act for your account. It works once, for ten
          minutes.
        </p>
        <button type="button" disabled={busy} onClick={() => void pair()}>
          {code ? 'New pairing code' : 'Create a pairing code'}
        </button>
        {code ? (
          <div role="status" class="code">
            <label for="pairing-code">Pairing code</label>
            <input id="pairing-code" readOnly value={code.code} onFocus={(e) => e.currentTarget.select()} />
            <span>
              valid until <time dateTime={code.expiresAt}>{when(code.expiresAt)}</time>
            </span>
          </div>
        ) : null}
      </section>
      <section aria-labelledby="keys">
        <h2 id="keys">API keys</h2>
        {keys === null ? (
          <p>Loading…</p>
        ) : keys.length === 0 ? (
          <p>No connector is paired.</p>
        ) : (
          <table>
            <caption class="sr-only">API keys of your connectors</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>{when(k.createdAt)}</td>
                  <td>{k.lastUsedAt ? when(k.lastUsedAt) : 'never'}</td>
                  <td>
                    <ConfirmButton
                      id={k.id}
                      name={k.name}
                      action="Revoke"
                      confirmText={`Revoke ${k.name} now`}
                      confirming={confirming}
                      setConfirming={setConfirming}
                      onConfirm={() => void revoke(k.id)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}
