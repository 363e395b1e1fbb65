import type { ChangedFile, SessionDiff, Workspace, WorkspaceStatus } from '@tether/protocol';

/** What an acquirer made of a workspace: recorded with the session (session.workspace_ready). */
export type PreparedWorkspace = WorkspaceStatus;

/** What a run's baseline is to the acquirer that took it (e.g. a git tree id). Opaque to the runtime. */
export type WorkspaceBaseline = string;

export interface ReleaseOptions {
  /** delete_session with discardWorkspaceChanges: remove even a workspace that holds work. */
  readonly discardChanges: boolean;
  /** Another open session works in the same directory (a fork): keep it whatever it holds. */
  readonly inUse: boolean;
  /**
   * delete_session: the session goes for good, and nothing will re-create its workspace, so work that
   * outlives it without it (git_worktree: commits the repository folder's checked-out branch or a tag
   * holds) does not keep it. A close keeps such a worktree: a reopen re-creates a removed one at its base.
   */
  readonly forDelete?: boolean;
}

/**
 * One kind of workspace (`directory`, `git_worktree`, or a host's own): how a session's workspace
 * is prepared before the agent runs in it and released when the session ends. The runtime picks
 * the acquirer by `workspace.kind`; `createAgentRuntime({ workspaces })` adds to the built-in ones.
 * Every method throws an AgentError a host can act on (invalid_workspace with details.reason for a
 * workspace that cannot be prepared), and nothing the user changed is ever removed unless
 * ReleaseOptions.discardChanges says so.
 */
export interface WorkspaceAcquirer {
  readonly kind: string;
  /**
   * At open_session, before anything is recorded: checks the request and makes the workspace (a
   * worktree on a new branch). Must be safe to run for many sessions at once.
   */
  prepare(request: { readonly sessionId: string; readonly workspace: Workspace }): Promise<PreparedWorkspace>;
  /**
   * When a session is reopened, or a runtime starts with open sessions: makes sure the prepared
   * workspace is there again (re-created if it was removed; an error if it cannot be).
   */
  restore(prepared: PreparedWorkspace, request: { readonly sessionId: string }): Promise<PreparedWorkspace>;
  /** At close and delete: removes the workspace when it holds no work, keeps it otherwise (and says why). */
  release(prepared: PreparedWorkspace, options: ReleaseOptions): Promise<PreparedWorkspace>;
  /** Before a run: the state to compare with once it ends. Optional (a plain directory has none). */
  baseline?(prepared: PreparedWorkspace): Promise<WorkspaceBaseline>;
  /** After a run: the files changed since the baseline, at most `limit` (truncated says if more). */
  changedSince?(
    prepared: PreparedWorkspace,
    baseline: WorkspaceBaseline,
    options: { readonly limit: number },
  ): Promise<{ readonly files: ChangedFile[]; readonly truncated: boolean }>;
  /**
   * The session's whole work against the workspace's base (capability_unsupported without it).
   * maxBytes 0 asks for the file list only (the runtime counts a workspace's changed files so).
   */
  diff?(
    prepared: PreparedWorkspace,
    options: { readonly sessionId: string; readonly maxBytes: number },
  ): Promise<SessionDiff>;
  /**
   * The runtime is shutting down without waiting (forced, or bounded by a grace): work in flight is
   * stopped (a git hook that takes its time must not outlive the host). A prepare stopped so fails and
   * takes back what it had made. Optional.
   */
  stop?(): void;
  /**
   * At the runtime's start, before any prepare: takes back what an earlier host ended outright (SIGKILL)
   * left half-made, which no session names. Optional; a failure is reported as a background error.
   */
  sweep?(): Promise<void>;
}
