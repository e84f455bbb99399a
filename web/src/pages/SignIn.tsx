import { useEffect, useState } from 'preact/hooks';
import { api, need } from '../api/client';
import { ErrorLine } from '../components/Layout';
import { finishGoogleSignIn, googleAnswer, startGoogleSignIn, type WebConfig } from '../google';
import { saveSession } from '../session';
import { useAction } from '../useAction';

/**
 * Sign-in: an email code (request, then verify), or Google when the fleet is configured for it
 * (a redirect there and back to /signin/google). Either way the JWT goes to sessionStorage only.
 */
export function SignInPage({ google }: { google: WebConfig['google'] }) {
  const [email, setEmail] = useState('');
  const [code, setCode] = useState('');
  const [sent, setSent] = useState(false);
  const [withGoogle, setWithGoogle] = useState(false);
  const { busy, error, run } = useAction();

  // Back from Google: the answer was taken out of the URL at start-up (main.tsx); complete it here.
  useEffect(() => {
    const answer = googleAnswer();
    if (!answer) return;
    setWithGoogle(true);
    void run(() => finishGoogleSignIn(answer)).then(() => setWithGoogle(false));
  }, []);

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
      {withGoogle ? <p role="status">Signing you in with Google…</p> : null}
      <ErrorLine error={error} />
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
      {google ? (
        <div class="alt">
          <p>Or with your Google account:</p>
          <button type="button" disabled={busy} onClick={() => startGoogleSignIn(google)}>
            Sign in with Google
          </button>
        </div>
      ) : null}
    </main>
  );
}
