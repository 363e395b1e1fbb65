import { type FormEvent, type KeyboardEvent, useState } from 'react';

export interface ComposerProps {
  readonly running: boolean;
  readonly closed: boolean;
  readonly stopping: boolean;
  /** Resolves once the daemon recorded the turn; rejects to keep the text for another try. */
  readonly onSend: (text: string) => Promise<void>;
  readonly onStop: () => void;
}

/** Write a turn; Enter sends, Shift+Enter starts a new line; Stop interrupts the active run. */
export function Composer({ running, closed, stopping, onSend, onStop }: ComposerProps) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const canSend = !running && !closed && !sending && text.trim() !== '';
  const send = async () => {
    if (!canSend) return;
    setSending(true);
    try {
      await onSend(text);
      setText('');
    } catch {
      // The session view shows why; the text stays for another try.
    } finally {
      setSending(false);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void send();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  };
  return (
    <form className="composer" aria-label="Send a turn" onSubmit={submit}>
      <textarea
        aria-label="Message"
        placeholder={
          closed
            ? 'This session is closed.'
            : running
              ? 'Wait for the run to finish, or stop it.'
              : 'Ask Claude… (Enter sends, Shift+Enter for a new line)'
        }
        rows={2}
        value={text}
        disabled={closed}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="composer-actions">
        {running ? (
          <button type="button" className="button-stop" aria-label="Stop the run" disabled={stopping} onClick={onStop}>
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        ) : null}
        <button type="submit" className="button-send" disabled={!canSend}>
          Send
        </button>
      </div>
    </form>
  );
}
