import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, type ChangedFile, type WorkspaceStatus } from '@tether/protocol';
import type { ReleaseOptions, WorkspaceAcquirer } from '@tether/runtime';

export type FakeWorkspaceStep = 'prepare' | 'restore' | 'release' | 'baseline' | 'changedSince' | 'diff';

export interface FakeWorkspaceCall {
  readonly step: FakeWorkspaceStep;
  /** The workspace's directory (for prepare: the session id it was asked for). */
  readonly subject: string;
  readonly release?: ReleaseOptions;
}

export interface FakeWorkspaceAcquirer extends WorkspaceAcquirer {
  /** Every call, in order. */
  readonly calls: FakeWorkspaceCall[];
  /** The next call of `step` fails with `error` (invalid_workspace branch_exists by default). */
  failNext(step: FakeWorkspaceStep, error?: AgentError): void;
  /** What release finds in the workspace at `directory`: work that keeps it (null: none, the default). */
  setWork(directory: string, work: 'uncommitted_changes' | 'commits_beyond_base' | null): void;
  /** What the next comparisons answer: a run's changed files, and the files differing from the base. */
  setChanges(changes: { run?: ChangedFile[]; session?: ChangedFile[] }): void;
  /** The next baseline is taken only once the returned function is called (as git's may take a while). */
  holdNextBaseline(): () => void;
}

/**
 * A `git_worktree` acquirer without git, for runtime tests: prepare makes a folder under `root`
 * named after the session, release removes it unless it is in use or holds work (setWork), each
 * step recorded in `calls` and made to fail with failNext.
 */
export function createFakeWorkspaceAcquirer(options: { readonly root: string }): FakeWorkspaceAcquirer {
  const calls: FakeWorkspaceCall[] = [];
  const failures = new Map<FakeWorkspaceStep, AgentError>();
  const work = new Map<string, 'uncommitted_changes' | 'commits_beyond_base'>();
  let runFiles: ChangedFile[] = [];
  let sessionFiles: ChangedFile[] = [];
  let baselines = 0;
  let baselineHold: Promise<void> | null = null;

  function enter(step: FakeWorkspaceStep, subject: string, release?: ReleaseOptions): void {
    calls.push({ step, subject, ...(release ? { release } : {}) });
    const failure = failures.get(step);
    if (failure) {
      failures.delete(step);
      throw failure;
    }
  }

  return {
    kind: 'git_worktree',
    calls,
    failNext(step, error) {
      failures.set(
        step,
        error ??
          new AgentError({
            code: 'invalid_workspace',
            message: 'The branch already exists (fake). Pass another branch name.',
            details: { reason: 'branch_exists' },
          }),
      );
    },
    setWork(directory, kept) {
      if (kept) work.set(directory, kept);
      else work.delete(directory);
    },
    holdNextBaseline() {
      let release = () => {};
      baselineHold = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
    setChanges(changes) {
      runFiles = changes.run ?? runFiles;
      sessionFiles = changes.session ?? sessionFiles;
    },
    async prepare({ sessionId, workspace }) {
      enter('prepare', sessionId);
      if (workspace.kind !== 'git_worktree') throw new Error(`The fake acquirer was given a ${workspace.kind}.`);
      const directory = path.join(options.root, sessionId);
      await mkdir(directory, { recursive: true });
      return {
        kind: 'git_worktree',
        directory,
        worktree: {
          repository: workspace.repository,
          path: directory,
          branch: workspace.branch ?? `tether/${sessionId.slice(4, 12)}`,
          baseCommit: '0'.repeat(40),
        },
        state: 'ready',
        keptBecause: null,
        changedFiles: 0,
      } satisfies WorkspaceStatus;
    },
    async restore(prepared) {
      enter('restore', prepared.directory);
      await mkdir(prepared.directory, { recursive: true });
      return { ...prepared, state: 'ready', keptBecause: null };
    },
    async release(prepared, release) {
      enter('release', prepared.directory, release);
      const held = work.get(prepared.directory);
      if (release.inUse) return { ...prepared, state: 'kept', keptBecause: 'in_use' };
      if (held && !release.discardChanges) return { ...prepared, state: 'kept', keptBecause: held };
      await rm(prepared.directory, { recursive: true, force: true });
      work.delete(prepared.directory);
      return { ...prepared, state: 'removed', keptBecause: null };
    },
    async baseline(prepared) {
      enter('baseline', prepared.directory);
      const hold = baselineHold;
      baselineHold = null;
      await hold;
      baselines += 1;
      return `baseline-${baselines}`;
    },
    async changedSince(prepared, _baseline, { limit }) {
      enter('changedSince', prepared.directory);
      return { files: runFiles.slice(0, limit), truncated: runFiles.length > limit };
    },
    async diff(prepared, { sessionId, maxBytes }) {
      enter('diff', prepared.directory);
      const text = sessionFiles.map((file) => `diff --git a/${file.path} b/${file.path}\n`).join('');
      return {
        sessionId,
        baseCommit: prepared.worktree?.baseCommit ?? '0'.repeat(40),
        branch: prepared.worktree?.branch ?? null,
        files: sessionFiles,
        diff: text.slice(0, maxBytes),
        truncated: text.length > maxBytes,
      };
    },
  };
}
