import { useState } from 'preact/hooks';
import { api, need } from '../api/client';
import { ErrorLine } from '../components/Layout';
import { saveSession } from '../session';

/** §1.1 email-code sign-in: request a code, then verify it; the JWT goes to sessionStorage only. */
export function SignInPage() {
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const request = (ev: Event) => {
    ev.preventDefault();
    void run(async () => {
      need(
        await api.POST('/api/v1/auth/oan/email/request-code', { body: { email: email.trim() } }),
        'request code',
      );
      setSent(true);
    });
  };
  const verify = (ev: Event) => {
    ev.preventDefault();
    void run(async () => {
      const res = need(
        await api.POST('/api/v1/auth/oan/email/verify', {
          body: { email: email.trim(), code: code.trim(), platform: 'other' },
        }),
        'verify',
      );
      saveSession({ token: res.token, userId: res.user.id, email: res.user.email ?? email.trim() });
    });
  };

  return (
    <main id="main" class="signin">
      <h1 tabIndex={-1}>Sign in to OAN</h1>
      <p>We send a six-digit code to your email address.</p>
      <form onSubmit={request}>
        <label for="email">Email</label>
        <input
          id="email"
          type="email"
          autocomplete="email"
          required
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          {sent ? 'Send another code' : 'Send code'}
        </button>
      </form>
      {sent ? (
        <form onSubmit={verify}>
          <p role="status">A code is on its way to {email.trim()}.</p>
          <label for="code">Code</label>
          <input
            id="code"
            inputMode="numeric"
            autocomplete="one-time-code"
            pattern="[0-9]{6}"
            required
            value={code}
            onInput={(e) => setCode(e.currentTarget.value)}
          />
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </form>
      ) : null}
      <ErrorLine error={error} />
    </main>
  );
}
