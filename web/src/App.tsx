import { useEffect, useState } from 'preact/hooks';
import { Layout } from './components/Layout';
import type { WebConfig } from './google';
import { live } from './live';
import { ConnectorsPage } from './pages/Connectors';
import { ConversationPage, ConversationsPage } from './pages/Conversations';
import { GoferPage } from './pages/Gofer';
import { HomePage } from './pages/Home';
import { RuntimePage, RuntimesPage } from './pages/Runtimes';
import { SignInPage } from './pages/SignIn';
import { ThreadPage } from './pages/Thread';
import { param, usePath } from './router';
import { loadSession, onSessionChange, type Session } from './session';

function useSession(): Session | null {
  const [session, setSession] = useState(loadSession);
  useEffect(() => onSessionChange(() => setSession(loadSession())), []);
  useEffect(() => {
    if (session) live.start(session.token);
    else live.stop();
  }, [session?.token]);
  return session;
}

/** Routes by path: the webUrls the events carry (`/gofers/:id`, `/threads/:id`) and the app's own pages. */
export function App({ config }: { config: WebConfig }) {
  const session = useSession();
  const path = usePath();
  // A webUrl opened while signed out: sign in here, then the same path renders.
  if (!session) return <SignInPage google={config.google} />;
  const goferId = param(path, '/gofers/');
  const threadId = param(path, '/threads/');
  const conversationId = param(path, '/conversations/');
  const runtimeId = param(path, '/runtimes/');
  let page;
  if (goferId) page = <GoferPage goferId={goferId} />;
  else if (threadId) page = <ThreadPage threadId={threadId} session={session} />;
  else if (conversationId) page = <ConversationPage conversationId={conversationId} session={session} />;
  else if (path === '/conversations') page = <ConversationsPage />;
  else if (path === '/connectors') page = <ConnectorsPage />;
  else if (runtimeId) page = <RuntimePage runtimeId={runtimeId} />;
  else if (path === '/runtimes') page = <RuntimesPage />;
  else page = <HomePage />;
  return (
    <Layout session={session} path={path}>
      {page}
    </Layout>
  );
}
