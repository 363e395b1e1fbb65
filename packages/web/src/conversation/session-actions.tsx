import { useEffect, useId, useRef, useState } from 'react';
import { useFocusKeptIn } from '../focus/use-focus-kept-in.js';

export interface SessionActionsProps {
  readonly closed: boolean;
  readonly running: boolean;
  /** Each resolves once the daemon recorded it; a refusal is shown by the session view. */
  readonly onClose: () => Promise<void>;
  readonly onReopen: () => Promise<void>;
  readonly onDelete: (discardWorkspaceChanges: boolean) => Promise<void>;
  /** Set when the session's kept worktree holds work that deleting would lose: where it is and why it was kept. */
  readonly keptWork: string | null;
}

type Confirming = 'close' | 'delete' | null;

/**
 * Close, reopen, delete. Closing is undone by reopening, so it asks first only when it would stop a
 * run; deleting removes the history for good, so it always asks, and only a closed session offers it.
 */
export function SessionActions({ closed, running, onClose, onReopen, onDelete, keptWork }: SessionActionsProps) {
  const [confirming, setConfirming] = useState<Confirming>(null);
  const [discard, setDiscard] = useState(false);
  const [busy, setBusy] = useState(false);
  const discardId = useId();
  const group = useRef<HTMLFieldSetElement>(null);
  useFocusKeptIn(group, `${confirming}:${closed}:${busy}`);
  // Reopened meanwhile (another tab, another client): "Delete for good" no longer applies.
  useEffect(() => {
    if (!closed) setConfirming((current) => (current === 'delete' ? null : current));
  }, [closed]);
  const act = (action: () => Promise<void>) => async () => {
    setBusy(true);
    try {
      await action();
    } catch {
      // The session view shows why.
    } finally {
      setBusy(false);
      setConfirming(null);
      setDiscard(false);
    }
  };
  if (confirming !== null) {
    // The run may end while the question is open: the question then says what closing does now.
    const question =
      confirming === 'delete'
        ? 'Delete this session and its whole history? This cannot be undone.'
        : running
          ? 'Closing stops the run that is going on. Close anyway?'
          : 'The run has ended meanwhile. Close the session?';
    return (
      <fieldset
        ref={group}
        className="session-actions"
        aria-label="Confirm"
        onKeyDown={(event) => {
          // Escape answers a confirmation "no", as it closes a dialog.
          if (event.key === 'Escape' && !busy) setConfirming(null);
        }}
      >
        <span>{question}</span>
        {confirming === 'delete' && keptWork !== null ? (
          // Deleting never throws work away unasked: without the tick the daemon refuses and says why.
          <label htmlFor={discardId}>
            <input
              id={discardId}
              type="checkbox"
              checked={discard}
              onChange={(event) => setDiscard(event.target.checked)}
            />{' '}
            {keptWork} Also remove the worktree and its branch, discarding that work
          </label>
        ) : null}
        <button
          type="button"
          className="button-deny"
          disabled={busy}
          onClick={act(confirming === 'delete' ? () => onDelete(discard) : onClose)}
        >
          {confirming === 'delete' ? 'Delete for good' : running ? 'Close and stop' : 'Close'}
        </button>
        <button type="button" disabled={busy} onClick={() => setConfirming(null)}>
          Cancel
        </button>
      </fieldset>
    );
  }
  return (
    <fieldset ref={group} className="session-actions" aria-label="Session actions">
      {closed ? (
        <>
          <button type="button" disabled={busy} aria-label="Reopen the session" onClick={act(onReopen)}>
            Reopen
          </button>
          <button
            type="button"
            className="button-deny"
            disabled={busy}
            aria-label="Delete the session"
            onClick={() => setConfirming('delete')}
          >
            Delete…
          </button>
        </>
      ) : (
        <button type="button" disabled={busy} onClick={running ? () => setConfirming('close') : act(onClose)}>
          Close session
        </button>
      )}
    </fieldset>
  );
}
