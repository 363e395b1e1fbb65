import { useEffect, useId, useRef, useState } from 'react';
import { changesNothing } from '@tether/protocol';

export interface ApprovalEditProps {
  /** The tool input the agent proposed (model-authored, untrusted: edited as plain text only). */
  readonly input: Record<string, unknown>;
  readonly sending: boolean;
  /** Approves with the edited input in place of the model's. */
  readonly onApprove: (updatedInput: Record<string, unknown>) => void;
  readonly onCancel: () => void;
}

type Parsed = { readonly input: Record<string, unknown> } | { readonly problem: string };

/**
 * A command is edited as the command line itself (the rest of the input kept); anything else as
 * its JSON. The edit goes to the agent as the input to run; the model's own input is not run.
 */
function editableCommand(input: Record<string, unknown>): string | null {
  return typeof input['command'] === 'string' ? input['command'] : null;
}

function parseEdit(input: Record<string, unknown>, text: string): Parsed {
  if (editableCommand(input) !== null) {
    return text.trim() === ''
      ? { problem: 'The command is empty. Type the command to run, or cancel the edit.' }
      : { input: { ...input, command: text } };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `This is not valid JSON (${(error as Error).message}). Fix it, or cancel the edit.` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: 'The tool input must be a JSON object ({ … }). Fix it, or cancel the edit.' };
  if (changesNothing(value as Record<string, unknown>))
    return {
      problem:
        "An empty input changes nothing: the tool would run with the model's own. Give its whole input, or cancel the edit.",
    };
  return { input: value as Record<string, unknown> };
}

/** Edit the tool input, then approve: the agent runs what the person wrote, never a half-parsed edit. */
export function ApprovalEdit({ input, sending, onApprove, onCancel }: ApprovalEditProps) {
  const command = editableCommand(input);
  const [text, setText] = useState(command ?? JSON.stringify(input, null, 2));
  const [problem, setProblem] = useState<string | null>(null);
  const id = useId();
  const field = useRef<HTMLTextAreaElement>(null);
  // Opened from the Edit… button, which goes with it: the keyboard lands in what is to be edited.
  useEffect(() => field.current?.focus(), []);
  const label = command !== null ? 'Command to run instead' : 'Tool input to use instead (JSON)';
  const approve = () => {
    const parsed = parseEdit(input, text);
    if ('problem' in parsed) return setProblem(parsed.problem);
    setProblem(null);
    onApprove(parsed.input);
  };
  return (
    <div className="approval-edit">
      <label className="approval-edit-label" htmlFor={`${id}-text`}>
        {label}
      </label>
      <textarea
        ref={field}
        id={`${id}-text`}
        className="approval-edit-text"
        aria-invalid={problem !== null}
        aria-describedby={problem !== null ? `${id}-problem` : undefined}
        spellCheck={false}
        rows={Math.min(12, Math.max(2, text.split('\n').length))}
        value={text}
        onChange={(event) => {
          setText(event.target.value);
          // An old complaint about text that is gone would mislead.
          setProblem(null);
        }}
      />
      {problem !== null ? (
        <p className="notice notice-error" id={`${id}-problem`} role="alert">
          {problem}
        </p>
      ) : null}
      <div className="card-actions">
        <button
          type="button"
          className="button-approve"
          disabled={sending}
          title="Approve the edited input"
          onClick={approve}
        >
          Approve edited
        </button>
        <button type="button" disabled={sending} onClick={onCancel}>
          Cancel edit
        </button>
      </div>
    </div>
  );
}
