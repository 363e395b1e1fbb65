import { useCallback, useState } from 'react';
import { forgetDrafts } from './composer/draft-storage.js';
import { forgetStoredToken, readStoredToken, storeToken } from './connection/token-storage.js';
import { TokenForm } from './connection/token-form.js';
import { ConnectedApp } from './shell/connected-app.js';

/** Asks for the token once per tab, then shows the app; a refused token brings the question back. */
export function App() {
  const [token, setToken] = useState<string | null>(() => readStoredToken());
  const [reason, setReason] = useState<string | null>(null);
  const tokenRefused = useCallback(() => {
    forgetStoredToken();
    setReason('The daemon no longer accepts the token this tab had (was it rotated?).');
    setToken(null);
  }, []);
  const signOut = useCallback(() => {
    forgetStoredToken();
    forgetDrafts();
    setReason(null);
    setToken(null);
  }, []);
  if (token === null) {
    return (
      <TokenForm
        reason={reason}
        onAccepted={(accepted) => {
          storeToken(accepted);
          setToken(accepted);
        }}
      />
    );
  }
  return <ConnectedApp token={token} onTokenRefused={tokenRefused} onSignOut={signOut} />;
}
