import { useEffect, useMemo, useState } from 'react';
import { createTetherClient } from '@tether/client';
import { type ProviderCapabilities, agentDirectory } from '@tether/protocol';
import { DaemonContext, type DaemonConnection } from '../connection/daemon-context.js';
import { SessionView } from '../conversation/session-view.js';
import { NewSessionForm } from '../new-session/new-session-form.js';
import { NotificationToggle } from '../notifications/notification-toggle.js';
import { sessionDiffPath, sessionPath, useRoute } from '../routing/use-route.js';
import { SessionList } from '../sessions/session-list.js';
import { useSessionList } from '../sessions/use-session-list.js';
import { SessionDiffView } from '../workspace/session-diff-view.js';

function Workspace({ token, onSignOut }: { readonly token: string; readonly onSignOut: () => void }) {
  const [route, navigate] = useRoute();
  const list = useSessionList();
  const selected = route.name === 'session' || route.name === 'diff' ? route.sessionId : null;
  // What a delete left behind, said on the list it returns to; gone once the user goes elsewhere.
  const [leftNotice, setLeftNotice] = useState<string | null>(null);
  useEffect(() => {
    if (route.name !== 'list') setLeftNotice(null);
  }, [route.name]);
  return (
    <div className={`layout${route.name === 'list' ? '' : ' layout-detail'}`}>
      <header className="app-header">
        <a
          className="app-name"
          href="/"
          aria-label="Tether: all sessions"
          onClick={(event) => {
            event.preventDefault();
            navigate('/');
          }}
        >
          Tether
        </a>
        <div className="app-header-actions">
          <NotificationToggle token={token} />
          <button type="button" onClick={() => navigate('/new')}>
            New session
          </button>
          <button type="button" title="Forget the token in this tab" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <aside className="layout-list">
        {/* Above the list, which is all a narrow screen shows of this route. */}
        {leftNotice === null ? null : (
          <p className="notice notice-info" role="status">
            {leftNotice}
          </p>
        )}
        <SessionList list={list} selectedSessionId={selected} onOpen={navigate} />
      </aside>
      <main className="layout-main">
        {route.name === 'session' ? (
          <>
            <a
              className="back-link"
              href="/"
              onClick={(event) => {
                event.preventDefault();
                navigate('/');
              }}
            >
              ← All sessions
            </a>
            <SessionView
              key={route.sessionId}
              sessionId={route.sessionId}
              onStateChange={list.refresh}
              onLeave={(notice) => {
                list.refresh();
                navigate('/');
                setLeftNotice(notice ?? null);
              }}
              onOpenSession={(sessionId) => navigate(sessionPath(sessionId))}
              onOpenDiff={() => navigate(sessionDiffPath(route.sessionId))}
            />
          </>
        ) : route.name === 'diff' ? (
          <SessionDiffView
            key={route.sessionId}
            sessionId={route.sessionId}
            conversationPath={sessionPath(route.sessionId)}
            onOpenConversation={() => navigate(sessionPath(route.sessionId))}
            onLeave={() => {
              list.refresh();
              navigate('/');
            }}
          />
        ) : route.name === 'new' ? (
          <NewSessionForm
            suggestedDirectory={list.sessions[0] ? agentDirectory(list.sessions[0].snapshot.workspace, null) : ''}
            onOpened={(sessionId) => {
              list.refresh();
              navigate(sessionPath(sessionId));
            }}
          />
        ) : (
          <p className="muted placeholder">Choose a session, or open a new one.</p>
        )}
      </main>
    </div>
  );
}

/** The app once a token was accepted: one client for every view, and the providers' capabilities. */
export function ConnectedApp({
  token,
  onTokenRefused,
  onSignOut,
}: {
  readonly token: string;
  readonly onTokenRefused: () => void;
  readonly onSignOut: () => void;
}) {
  const client = useMemo(() => createTetherClient({ url: window.location.origin, token }), [token]);
  const [capabilities, setCapabilities] = useState<Readonly<Record<string, ProviderCapabilities>>>({});
  useEffect(() => {
    let stopped = false;
    client
      .getProviders()
      .then((providers) => {
        if (!stopped)
          setCapabilities(Object.fromEntries(providers.map((provider) => [provider.name, provider.capabilities])));
      })
      .catch(() => {
        // Without them the controls menu stays hidden; everything else works.
      });
    return () => {
      stopped = true;
    };
  }, [client]);
  const connection = useMemo<DaemonConnection>(
    () => ({ client, capabilities, tokenRefused: onTokenRefused }),
    [client, capabilities, onTokenRefused],
  );
  return (
    <DaemonContext.Provider value={connection}>
      <Workspace token={token} onSignOut={onSignOut} />
    </DaemonContext.Provider>
  );
}
