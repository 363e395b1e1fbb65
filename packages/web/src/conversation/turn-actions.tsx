import { useId, useRef, useState } from 'react';
import { useFocusKeptIn } from '../focus/use-focus-kept-in.js';

export interface TurnActionsProps {
  readonly turn: number;
  /** Null when this turn cannot be forked from (no checkpoint, or the agent cannot fork). */
  readonly onFork: (() => Promise<void>) | null;
  /** Null when the conversation cannot go back to before this turn now. */
  readonly onRewind: ((files: boolean) => Promise<void>) | null;
  /** Whether the agent can put the workspace's files back too (its capabilities). */
  readonly offerFiles: boolean;
}

/**
 * "Fork from here" (a new session whose conversation ends with this turn; this one is untouched)
 * and "Rewind to here" (this turn and the later ones leave the agent's context), the latter after
 * a confirmation, with the files too when the agent can.
 */
export function TurnActions({ turn, onFork, onRewind, offerFiles }: TurnActionsProps) {
  const [confirming, setConfirming] = useState(false);
  const [files, setFiles] = useState(false);
  const [busy, setBusy] = useState(false);
  const filesId = useId();
  const group = useRef<HTMLFieldSetElement>(null);
  useFocusKeptIn(group, `${confirming}:${busy}`);
  if (onFork === null && onRewind === null) return null;
  const act = async (action: () => Promise<void>) => {
    setBusy(true);
    try {
      await action();
      setConfirming(false);
    } catch {
      // The session view shows why.
    } finally {
      setBusy(false);
    }
  };
  if (confirming && onRewind !== null) {
    return (
      <fieldset
        ref={group}
        className="turn-actions turn-actions-confirm"
        aria-label={`Confirm the rewind to turn ${turn}`}
        onKeyDown={(event) => {
          // Escape answers a confirmation "no", as it closes a dialog.
          if (event.key === 'Escape' && !busy) setConfirming(false);
        }}
      >
        <span>
          Rewind the conversation to before turn {turn}? The agent forgets this turn and every later one; they stay
          here, marked as rewound.
        </span>
        {offerFiles ? (
          <label htmlFor={filesId}>
            <input id={filesId} type="checkbox" checked={files} onChange={(event) => setFiles(event.target.checked)} />{' '}
            Also restore files to how they were before this turn
          </label>
        ) : null}
        <button type="button" className="button-deny" disabled={busy} onClick={() => void act(() => onRewind(files))}>
          Rewind
        </button>
        <button type="button" disabled={busy} onClick={() => setConfirming(false)}>
          Cancel
        </button>
      </fieldset>
    );
  }
  return (
    <fieldset ref={group} className="turn-actions" aria-label={`Turn ${turn} actions`}>
      {onFork === null ? null : (
        <button type="button" disabled={busy} onClick={() => void act(onFork)}>
          Fork from here
        </button>
      )}
      {onRewind === null ? null : (
        <button type="button" disabled={busy} onClick={() => setConfirming(true)}>
          Rewind to here
        </button>
      )}
    </fieldset>
  );
}
