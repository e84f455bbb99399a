/**
 * The signed-in operator: the OAN JWT and the account, kept in sessionStorage (ADR 0020) so a reload
 * keeps the session while the tab lives; never in a URL, never logged.
 */
export interface Session {
  token: string;
  userId: string;
  email: string;
}

const KEY = 'oan.session';
const listeners = new Set<() => void>();

export function loadSession(): Session | null {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as Partial<Session>;
    return typeof s.token === 'string' && typeof s.userId === 'string'
      ? { token: s.token, userId: s.userId, email: s.email ?? '' }
      : null;
  } catch {
    return null;
  }
}

export function saveSession(s: Session | null): void {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
  for (const l of listeners) l();
}

export function onSessionChange(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}
