import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { useLive } from '../live';
import { saveSession, type Session } from '../session';

const NAV = [
  { href: '/', label: 'Gofers' },
  { href: '/conversations', label: 'Conversations' },
  { href: '/connectors', label: 'Connectors' },
  { href: '/runtimes', label: 'Runtimes' },
];

export function Layout({
  session,
  path,
  children,
}: {
  session: Session;
  path: string;
  children: ComponentChildren;
}) {
  const l = useLive();
  const { pendingQuestions, decisions } = l.unresolved.summary;
  const open = pendingQuestions + decisions;
  // A new page: focus its heading so a screen reader announces it.
  useEffect(() => document.querySelector<HTMLElement>('main h1')?.focus(), [path]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">OAN</span>
        <nav aria-label="Main">
          <ul>
            {NAV.map((n) => (
              <li key={n.href}>
                <a href={n.href} aria-current={path === n.href ? 'page' : undefined}>
                  {n.label}
                  {n.href === '/' && open > 0 ? (
                    <span class="badge" aria-label={`${open} waiting for you`}>
                      {open}
                    </span>
                  ) : null}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class={`status status-${l.status}`} role="status">
          {l.status === 'live' ? 'Live' : l.status === 'connecting' ? 'Connecting…' : 'Offline, retrying'}
        </span>
        <span class="who">{session.email}</span>
        <button type="button" class="link" onClick={() => saveSession(null)}>
          Sign out
        </button>
      </header>
      <main id="main">{children}</main>
    </>
  );
}

/** An error line that screen readers announce. */
export function ErrorLine({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export const when = (iso: string) => new Date(iso).toLocaleString();
