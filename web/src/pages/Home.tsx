import { useState } from 'preact/hooks';
import { api, need, type Envelope, type Gofer } from '../api/client';
import { ErrorLine } from '../components/Layout';
import { RuntimeWaiting } from '../components/RuntimeWaiting';
import { useEventCount, useLive } from '../live';
import { useLoad } from '../useLoad';
import { navigate } from '../router';
import { ConfirmButton } from '../components/ConfirmButton';
import { useAction } from '../useAction';

const STATUS: Record<string, string> = {
  in_discovery: 'In discovery',
  ready_for_pairing: 'Ready for pairing',
};

/**
 * What waits for the operator (the unresolved digest): open questions and decisions, each linked to
 * its page; and the jobs the account's runtimes handed back to it.
 */
export function Waiting() {
  const { unresolved } = useLive();
  const { pendingQuestions, goferCount, decisions } = unresolved.summary;
  return (
    <section aria-labelledby="waiting">
      <h2 id="waiting">Waiting for you</h2>
      {unresolved.events.length === 0 ? (
        <p>Nothing open: no questions, no decisions.</p>
      ) : (
        <>
          <p>
            {pendingQuestions} open question{pendingQuestions === 1 ? '' : 's'} from {goferCount} Gofer
            {goferCount === 1 ? '' : 's'}; {decisions} decision{decisions === 1 ? '' : 's'}.
          </p>
          <ul class="waiting">
            {unresolved.events.map((e) => (
              <li key={e.eventId}>
                <a href={linkOf(e)}>{describe(e)}</a>
              </li>
            ))}
          </ul>
        </>
      )}
      <RuntimeWaiting />
    </section>
  );
}

const linkOf = (e: Envelope) =>
  e.threadId && e.type !== 'gofer_question' ? `/threads/${e.threadId}` : `/gofers/${e.goferId ?? ''}`;
function describe(e: Envelope): string {
  const p = e.payload;
  const name = typeof p.counterpartRoleName === 'string' ? p.counterpartRoleName : 'a counterpart';
  switch (e.type) {
    case 'gofer_question':
      return `Question: ${typeof p.content === 'string' ? p.content : ''}`;
    case 'pair_proposed':
      return `Confirm the pairing with ${name}`;
    case 'match_request':
      return `Match request from ${name}`;
    // The unresolved digest holds only the three above.
    case 'gofer_message':
    case 'session_summary':
    case 'match_decided':
    case 'relay_message':
    case 'system_notice':
      return e.type;
  }
}

export function HomePage() {
  const [gofers, setGofers] = useState<Gofer[] | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const { busy, error, setError, run } = useAction();
  const changes = useEventCount(() => true);

  const load = useLoad(
    async (latest) => {
      try {
        const read = need(await api.GET('/api/v1/gofers'), 'GET /gofers');
        if (latest()) setGofers(read);
      } catch (err) {
        if (latest()) setError((err as Error).message);
      }
    },
    [changes],
  );

  const create = () =>
    run(async () => {
      const g = need(
        await api.POST('/api/v1/gofers', { body: { locale: navigator.language || 'en' } }),
        'POST /gofers',
      );
      navigate(`/gofers/${encodeURIComponent(g.goferId)}`);
    });
  const remove = (goferId: string) =>
    run(async () => {
      need(await api.DELETE('/api/v1/gofers/{goferId}', { params: { path: { goferId } } }), 'DELETE');
      setConfirming(null);
      await load();
    });

  return (
    <>
      <h1 tabIndex={-1}>Your Gofers</h1>
      <Waiting />
      <section aria-labelledby="gofers">
        <h2 id="gofers">Gofers</h2>
        <button type="button" onClick={() => void create()} disabled={busy}>
          New Gofer
        </button>
        <ErrorLine error={error} />
        {gofers === null ? (
          <p>Loading…</p>
        ) : gofers.length === 0 ? (
          <p>No Gofers yet. A new Gofer interviews you about what you are looking for.</p>
        ) : (
          <table>
            <caption class="sr-only">Your Gofers</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Discovery</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {gofers.map((g) => (
                <tr key={g.goferId}>
                  <td>
                    <a href={`/gofers/${encodeURIComponent(g.goferId)}`}>{g.name}</a>
                  </td>
                  <td>{g.description}</td>
                  <td>{STATUS[g.discoveryStatus] ?? g.discoveryStatus}</td>
                  <td>{new Date(g.createdAt).toLocaleDateString()}</td>
                  <td>
                    <ConfirmButton
                      id={g.goferId}
                      name={g.name}
                      action="Delete"
                      confirmText={`Delete ${g.name} for good`}
                      confirming={confirming}
                      setConfirming={setConfirming}
                      onConfirm={() => void remove(g.goferId)}
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
