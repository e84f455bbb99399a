import { useEffect, useState } from 'preact/hooks';
import { api, need, type Runtime, type RuntimeJob } from '../api/client';
import { ErrorLine, when } from '../components/Layout';
import { useEventCount } from '../live';
import { useLoad } from '../useLoad';

const STATES = ['queued', 'leased', 'handled', 'exhausted', 'dropped', 'superseded', 'owner'] as const;
type JobState = (typeof STATES)[number];
/** Jobs read per page (the route's largest). */
const PAGE = 200;

/** The account's runtimes (docs/runtimes.md): named consumers whose workers claim its decisions as jobs. */
export function RuntimesPage() {
  const [runtimes, setRuntimes] = useState<Runtime[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void (async () => {
      try {
        setRuntimes(need(await api.GET('/api/v1/runtimes'), 'runtimes'));
      } catch (err) {
        setError((err as Error).message);
      }
    })();
  }, []);

  return (
    <>
      <h1 tabIndex={-1}>Runtimes</h1>
      <ErrorLine error={error} />
      <p>
        A runtime hands each decision it takes to one of your connector's workers at a time. Connectors
        register them; here you see what they hold.
      </p>
      {runtimes === null ? (
        error ? null : (
          <p>Loading…</p>
        )
      ) : runtimes.length === 0 ? (
        <p>No runtime is registered: every connector of the account receives every event.</p>
      ) : (
        <table>
          <caption class="sr-only">Your runtimes</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Takes</th>
              <th scope="col">Lease</th>
              <th scope="col">Attempts</th>
              <th scope="col">Registered</th>
            </tr>
          </thead>
          <tbody>
            {runtimes.map((r) => (
              <tr key={r.runtimeId}>
                <td>
                  <a href={`/runtimes/${encodeURIComponent(r.runtimeId)}`}>{r.name}</a>
                </td>
                <td>
                  {r.policy.types.join(', ')}
                  {r.policy.goferIds ? ` (${r.policy.goferIds.length} Gofers)` : ''}
                </td>
                <td>{r.policy.leaseSeconds} s</td>
                <td>{r.policy.maxAttempts}</td>
                <td>{when(r.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/** One runtime's jobs in seq order, filtered by state: attempts, lease holder and expiry, progress. */
export function RuntimePage({ runtimeId }: { runtimeId: string }) {
  const [runtime, setRuntime] = useState<Runtime | null>(null);
  const [jobs, setJobs] = useState<RuntimeJob[] | null>(null);
  const [more, setMore] = useState(false);
  const [state, setState] = useState<JobState | ''>('');
  const [error, setError] = useState<string | null>(null);
  const [refreshed, setRefreshed] = useState(0);
  // a decision arriving may be a new job; leases change without an event, hence the button
  const decisions = useEventCount((e) => e.reply !== undefined);

  const page = async (after: string) =>
    need(
      await api.GET('/api/v1/runtimes/{runtimeId}/jobs', {
        params: {
          path: { runtimeId },
          query: { after, limit: String(PAGE), ...(state ? { state } : {}) },
        },
      }),
      'jobs',
    );

  useEffect(() => {
    void (async () => {
      try {
        setRuntime(
          need(await api.GET('/api/v1/runtimes/{runtimeId}', { params: { path: { runtimeId } } }), 'runtime'),
        );
      } catch (err) {
        setError((err as Error).message);
      }
    })();
  }, [runtimeId]);

  useLoad(
    async (latest) => {
      try {
        const first = await page('0');
        if (!latest()) return;
        setJobs(first);
        setMore(first.length === PAGE);
        setError(null);
      } catch (err) {
        if (latest()) setError((err as Error).message);
      }
    },
    [runtimeId, state, decisions, refreshed],
  );

  const showMore = async () => {
    if (!jobs?.length) return;
    try {
      const next = await page(jobs[jobs.length - 1]!.seq);
      setJobs([...jobs, ...next]);
      setMore(next.length === PAGE);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <>
      <h1 tabIndex={-1}>{runtime ? `Runtime ${runtime.name}` : 'Runtime'}</h1>
      <p>
        <a href="/runtimes">All runtimes</a>
      </p>
      <ErrorLine error={error} />
      {runtime ? (
        <p>
          Takes {runtime.policy.types.join(', ')}; a worker holds a job for {runtime.policy.leaseSeconds} s
          per lease, {runtime.policy.maxAttempts} attempts at most.
        </p>
      ) : null}
      <section aria-labelledby="jobs">
        <h2 id="jobs">Jobs</h2>
        <div class="filters">
          <label for="job-state">State</label>
          <select
            id="job-state"
            value={state}
            onChange={(e) => setState(e.currentTarget.value as JobState | '')}
          >
            <option value="">All states</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <button type="button" onClick={() => setRefreshed((n) => n + 1)}>
            Refresh
          </button>
        </div>
        {jobs === null ? (
          error ? null : (
            <p>Loading…</p>
          )
        ) : jobs.length === 0 ? (
          <p role="status">{state ? `No ${state} job.` : 'No job yet.'}</p>
        ) : (
          <>
            <table>
              <caption class="sr-only">
                Jobs of this runtime{state ? `, ${state}` : ''}, in the order they came
              </caption>
              <thead>
                <tr>
                  <th scope="col">Seq</th>
                  <th scope="col">Decision</th>
                  <th scope="col">State</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Lease owner</th>
                  <th scope="col">Lease until</th>
                  <th scope="col">Progress</th>
                </tr>
              </thead>
              <tbody>
                {jobs.map((j) => (
                  <tr key={j.jobId}>
                    <td>{j.seq}</td>
                    <td>
                      {j.goferId ? <a href={`/gofers/${encodeURIComponent(j.goferId)}`}>{j.type}</a> : j.type}
                    </td>
                    <td>{j.state}</td>
                    <td>{j.attempts}</td>
                    <td>{j.leaseOwner ?? '—'}</td>
                    <td>{j.leaseUntil ? <time dateTime={j.leaseUntil}>{when(j.leaseUntil)}</time> : '—'}</td>
                    <td>{progressText(j.progress)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {more ? (
              <button type="button" onClick={() => void showMore()}>
                Show more jobs
              </button>
            ) : null}
          </>
        )}
      </section>
    </>
  );
}

function progressText(p: RuntimeJob['progress']): string {
  if (!p) return '—';
  const parts = [p.percent === undefined ? null : `${p.percent} %`, p.note ?? null].filter((x) => x !== null);
  return parts.length ? parts.join(', ') : '—';
}
