import { useState } from 'preact/hooks';
import { api, need, type RuntimeWaitingJob } from '../api/client';
import { useEventCount } from '../live';
import { useLoad } from '../useLoad';

const REASON: Record<string, string> = {
  attempts_exhausted: 'its worker gave up',
  no_live_worker: 'no worker is running',
};

/** Where the owner answers a decision by hand (answering there closes the job, ADR 0032). */
function linkOf(e: Record<string, unknown>): string {
  const s = (k: string) => (typeof e[k] === 'string' ? encodeURIComponent(e[k]) : '');
  switch (e.type) {
    case 'pair_proposed':
    case 'match_request':
      return e.threadId ? `/threads/${s('threadId')}` : `/gofers/${s('goferId')}`;
    case 'relay_message':
      return `/conversations/${s('conversationId')}`;
    default:
      return `/gofers/${s('goferId')}`;
  }
}

function describe(j: RuntimeWaitingJob): string {
  const p = (j.event.payload ?? {}) as Record<string, unknown>;
  const text = (k: string) => (typeof p[k] === 'string' ? p[k] : '');
  switch (j.type) {
    case 'gofer_question':
      return `Question: ${text('content')}`;
    case 'gofer_message':
      return `Message from your Gofer: ${text('content')}`;
    case 'pair_proposed':
      return `Confirm the pairing with ${text('counterpartRoleName') || 'a counterpart'}`;
    case 'match_request':
      return `Match request from ${text('counterpartRoleName') || 'a counterpart'}`;
    case 'relay_message':
      return `Message in a conversation: ${text('content')}`;
  }
}

/**
 * The jobs the account's runtimes handed back ("Waiting for you", docs/runtimes.md): each links to
 * where it is answered by hand. Read again whenever an event arrives (the `runtime_job_waiting`
 * notice, or the answer that settles one).
 */
export function RuntimeWaiting() {
  const [jobs, setJobs] = useState<RuntimeWaitingJob[]>([]);
  const changes = useEventCount(() => true);
  useLoad(
    async (latest) => {
      try {
        const list = need(await api.GET('/api/v1/runtimes/waiting'), 'GET /runtimes/waiting');
        if (latest()) setJobs(list);
      } catch {
        // an extra to the digest above: unreadable now, it is read again at the next event
      }
    },
    [changes],
  );
  if (jobs.length === 0) return null;
  return (
    <div aria-labelledby="runtime-waiting">
      <h3 id="runtime-waiting">Handed back by your runtimes</h3>
      <ul class="waiting">
        {jobs.map((j) => (
          <li key={j.jobId}>
            <a href={linkOf(j.event)}>{describe(j)}</a>{' '}
            <small>
              ({j.runtimeName}: {REASON[j.ownerReason ?? ''] ?? 'handed back'})
            </small>
          </li>
        ))}
      </ul>
    </div>
  );
}
