import { type FormEvent, useId, useState } from 'react';
import { PermissionMode, type Workspace } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';
import { describeFailure, isTokenRefused } from '../connection/describe-failure.js';
import { permissionModeLabels } from '../format/format-values.js';
import { FailureNotice } from '../connection/failure-notice.js';
import { ModelOptions } from '../models/model-options.js';
import { useModelList } from '../models/use-model-list.js';

export interface NewSessionFormProps {
  /** A working directory to start from (the most recent session's). */
  readonly suggestedDirectory: string;
  readonly onOpened: (sessionId: string) => void;
}

/** Where the session works: the directory itself, or a new worktree of the repository it is in. */
function chosenWorkspace(directory: string, worktree: boolean, baseRef: string, branch: string): Workspace {
  if (!worktree) return { kind: 'directory', path: directory.trim() };
  return {
    kind: 'git_worktree',
    repository: directory.trim(),
    ...(baseRef.trim() === '' ? {} : { baseRef: baseRef.trim() }),
    ...(branch.trim() === '' ? {} : { branch: branch.trim() }),
  };
}

/** An optional git name (a ref, a branch): empty means git's default, said by the placeholder. */
function GitNameField(props: {
  readonly label: string;
  readonly value: string;
  readonly placeholder: string;
  readonly onChange: (value: string) => void;
}) {
  return (
    <label>
      {props.label}
      <input
        type="text"
        value={props.value}
        placeholder={props.placeholder}
        spellCheck={false}
        onChange={(event) => props.onChange(event.target.value)}
      />
    </label>
  );
}

/** Opens a session: where it works (a directory, or a worktree of its own), with which model, in which permission mode. */
export function NewSessionForm({ suggestedDirectory, onOpened }: NewSessionFormProps) {
  const { client, tokenRefused } = useDaemon();
  const [directory, setDirectory] = useState(suggestedDirectory);
  const [worktree, setWorktree] = useState(false);
  const [baseRef, setBaseRef] = useState('');
  const [branch, setBranch] = useState('');
  const [model, setModel] = useState('');
  const [mode, setMode] = useState<PermissionMode | ''>('');
  const [opening, setOpening] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const modelListId = useId();
  // The daemon's default provider: the one this form opens sessions with.
  const models = useModelList(undefined);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setOpening(true);
    setFailure(null);
    try {
      const receipt = await client.openSession({
        workspace: chosenWorkspace(directory, worktree, baseRef, branch),
        ...(model.trim() === '' ? {} : { model: model.trim() }),
        ...(mode === '' ? {} : { permissionMode: mode }),
        // The agent starts while the user writes the first prompt, not when it is sent.
        startAgent: true,
      });
      onOpened(receipt.sessionId);
    } catch (error) {
      if (isTokenRefused(error)) return tokenRefused();
      setFailure(describeFailure(error));
      setOpening(false);
    }
  };

  return (
    <form className="new-session card" aria-label="Open a new session" onSubmit={(event) => void submit(event)}>
      <h2>Open a new session</h2>
      <label>
        {worktree ? 'Repository' : 'Working directory'}
        <input
          type="text"
          required
          // The form was asked for: where to type goes first.
          // biome-ignore lint/a11y/noAutofocus: the person opened this form to fill it; its first field is where they type
          autoFocus
          value={directory}
          placeholder="/home/me/project"
          spellCheck={false}
          onChange={(event) => setDirectory(event.target.value)}
        />
      </label>
      <label className="checkbox-label">
        <input type="checkbox" checked={worktree} onChange={(event) => setWorktree(event.target.checked)} />
        In a new git worktree (its own folder and branch: other sessions on the repository are not touched)
      </label>
      {worktree ? (
        <>
          <GitNameField
            label="Base ref"
            value={baseRef}
            placeholder="HEAD (the repository's current commit)"
            onChange={setBaseRef}
          />
          <GitNameField label="Branch" value={branch} placeholder="tether/<short session id>" onChange={setBranch} />
        </>
      ) : null}
      <label>
        Model
        <input
          type="text"
          value={model}
          list={modelListId}
          autoComplete="off"
          placeholder="default (the CLI's own)"
          spellCheck={false}
          onChange={(event) => setModel(event.target.value)}
        />
        <ModelOptions id={modelListId} models={models} />
      </label>
      <label>
        Permission mode
        <select
          value={mode}
          onChange={(event) => setMode(event.target.value === '' ? '' : PermissionMode.parse(event.target.value))}
        >
          <option value="">Default (your own setting)</option>
          {PermissionMode.options.map((option) => (
            <option key={option} value={option}>
              {permissionModeLabels[option] ?? option}
            </option>
          ))}
        </select>
      </label>
      <div className="card-actions">
        <button type="submit" className="button-approve" disabled={opening || directory.trim() === ''}>
          {opening ? 'Opening…' : 'Open session'}
        </button>
      </div>
      <FailureNotice failure={failure} />
    </form>
  );
}
