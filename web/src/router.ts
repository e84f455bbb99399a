import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<() => void>();

/** A page of the app without a reload; `replace` takes the place of the current history entry. */
export function navigate(path: string, { replace = false }: { replace?: boolean } = {}): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  for (const l of listeners) l();
}

/** The current path; links inside the app navigate without a reload (a click handler on the document). */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

export function interceptLinks(): void {
  document.addEventListener('click', (ev) => {
    if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey)
      return;
    const a = (ev.target as Element | null)?.closest('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin) return;
    ev.preventDefault();
    navigate(url.pathname);
  });
}

/** `/gofers/:id` → the id, decoded; null when the path is not under `prefix`. */
export function param(path: string, prefix: string): string | null {
  if (!path.startsWith(prefix)) return null;
  const rest = path.slice(prefix.length).replace(/\/+$/, '');
  return rest && !rest.includes('/') ? decodeURIComponent(rest) : null;
}
