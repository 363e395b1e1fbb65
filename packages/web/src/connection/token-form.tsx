import { type FormEvent, useState } from 'react';
import { createTetherClient } from '@tether/client';
import { describeFailure, isTokenRefused } from './describe-failure.js';
import { FailureNotice } from './failure-notice.js';

export interface TokenFormProps {
  /** Why the token is asked for again (e.g. it was rotated), or null the first time. */
  readonly reason: string | null;
  readonly onAccepted: (token: string) => void;
}

/** Asks for the daemon's token once per tab, and checks it before keeping it. */
export function TokenForm({ reason, onAccepted }: TokenFormProps) {
  const [token, setToken] = useState('');
  const [checking, setChecking] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const candidate = token.trim();
    setChecking(true);
    setFailure(null);
    try {
      await createTetherClient({ url: window.location.origin, token: candidate }).listSessions({ limit: 1 });
      onAccepted(candidate);
    } catch (error) {
      setFailure(
        isTokenRefused(error)
          ? 'The daemon refused this token. Run `tether token` on the machine running the daemon to see the current one.'
          : describeFailure(error),
      );
      setChecking(false);
    }
  };
  return (
    <main className="token-page">
      <form
        className="card token-form"
        aria-label="Connect to the Tether daemon"
        onSubmit={(event) => void submit(event)}
      >
        <h1>Tether</h1>
        <p>
          Paste the daemon's token. <code>tether token</code> shows it. It is kept in this tab only.
        </p>
        {reason ? (
          <p className="notice notice-warning" role="status">
            {reason}
          </p>
        ) : null}
        <label>
          Daemon token
          <input
            type="password"
            autoComplete="off"
            spellCheck={false}
            required
            value={token}
            onChange={(event) => setToken(event.target.value)}
          />
        </label>
        <div className="card-actions">
          <button type="submit" className="button-approve" disabled={checking || token.trim() === ''}>
            {checking ? 'Checking…' : 'Connect'}
          </button>
        </div>
        <FailureNotice failure={failure} />
      </form>
    </main>
  );
}
