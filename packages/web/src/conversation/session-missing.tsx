/**
 * What a session's address shows when the daemon has no such session: it never existed, or it was
 * deleted (perhaps from another tab). Nothing here acts on it: every command would only be refused.
 */
export function SessionMissing({ sessionId, onLeave }: { readonly sessionId: string; readonly onLeave: () => void }) {
  return (
    <section className="session-view session-missing" aria-label="Session">
      <h2 className="session-title">This session does not exist (or was deleted)</h2>
      <p className="muted">
        The daemon has no session <code>{sessionId}</code>.
      </p>
      <p>
        <a
          href="/"
          onClick={(event) => {
            event.preventDefault();
            onLeave();
          }}
        >
          Back to the session list
        </a>
      </p>
    </section>
  );
}
