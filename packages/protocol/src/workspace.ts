import { z } from 'zod';

const absolutePath = z.string().min(1).max(4096);

/** A git ref as git takes it; never an option ("-…"), never whitespace or NUL. `what` says what to give instead. */
function gitRefName(what: string) {
  return z
    .string()
    .min(1)
    .max(250)
    .refine((value) => !value.startsWith('-') && !/[\s\0]/.test(value), what);
}

export const DirectoryWorkspace = z.strictObject({
  kind: z.literal('directory'),
  path: absolutePath,
});
export type DirectoryWorkspace = z.infer<typeof DirectoryWorkspace>;

/**
 * A git worktree of `repository` that Tether creates for the session, on a new branch, so sessions
 * on one repository never edit the same files. Released when the session is closed or deleted:
 * removed with its branch when it holds no work, kept otherwise.
 */
export const GitWorktreeWorkspace = z.strictObject({
  kind: z.literal('git_worktree'),
  /** The repository (its main checkout or any folder inside it). */
  repository: absolutePath,
  /** Where the branch starts (default: the repository's current HEAD). */
  baseRef: gitRefName('a git ref such as "main" or a commit id (no spaces, not starting with "-")').optional(),
  /** The new branch (default: tether/<short session id>); refused if it exists. */
  branch: gitRefName('a branch name such as "tether/my-task" (no spaces, not starting with "-")').optional(),
});
export type GitWorktreeWorkspace = z.infer<typeof GitWorktreeWorkspace>;

/** Where a session works, as the host asked for it. */
export const Workspace = z.discriminatedUnion('kind', [DirectoryWorkspace, GitWorktreeWorkspace]);
export type Workspace = z.infer<typeof Workspace>;
export type WorkspaceKind = Workspace['kind'];

/** A worktree Tether made for a session: where, on which branch, from which commit. */
export const WorktreeFacts = z.strictObject({
  /** The repository's top-level folder (its main checkout). */
  repository: absolutePath,
  /** The worktree's folder: where the agent runs. */
  path: absolutePath,
  branch: z.string().max(250),
  /** The commit the branch started at (full id). */
  baseCommit: z.string().regex(/^[0-9a-f]{40,64}$/),
});
export type WorktreeFacts = z.infer<typeof WorktreeFacts>;

/**
 * What became of a session's workspace: prepared (the agent runs in `directory`), or released when
 * the session closed: removed (nothing of the user's was in it) or kept (and why).
 */
export const WorkspaceStatus = z.strictObject({
  kind: z.string().max(50),
  /** Where the agent runs. */
  directory: absolutePath,
  worktree: WorktreeFacts.nullable(),
  state: z.enum(['ready', 'kept', 'removed']),
  /**
   * Why a released workspace was kept: it has uncommitted changes, commits beyond its base, another
   * open session uses it, its owner locked it (`git worktree lock`), or its folder is gone and its branch
   * is checked out in another (moved with `git worktree move`, or checked out by hand).
   */
  keptBecause: z
    .enum(['uncommitted_changes', 'commits_beyond_base', 'in_use', 'locked', 'checked_out_elsewhere'])
    .nullable(),
  /** How many files differ from the base commit, as of the last run's end (null: not known, or not a worktree). */
  changedFiles: z.number().int().nonnegative().nullable(),
});
export type WorkspaceStatus = z.infer<typeof WorkspaceStatus>;

/** Why a worktree was kept, in words any host shows: one wording, for the CLI and the web UI alike. */
export const keptBecauseWords: Record<NonNullable<WorkspaceStatus['keptBecause']>, string> = {
  uncommitted_changes: 'it has uncommitted changes',
  commits_beyond_base:
    'it has commits its base does not (on its branch, its checked-out HEAD, or left behind there by a checkout: git reflog in it lists them)',
  in_use: 'another open session works in it',
  locked: 'it is locked (git worktree lock): unlock it to let Tether remove it',
  checked_out_elsewhere:
    'its folder is gone and its branch is checked out in another folder (moved with git worktree move, or checked out by hand; git worktree list shows where): Tether leaves both to that checkout',
};

/** One file a run (or a session) changed, as git counts it. */
export const ChangedFile = z.strictObject({
  /** Relative to the workspace, "/"-separated. */
  path: z.string().max(4096),
  status: z.enum(['added', 'modified', 'deleted', 'renamed']),
  /** For a rename: where it came from. */
  previousPath: z.string().max(4096).optional(),
  /** Lines added and removed; null for a binary file. */
  added: z.number().int().nonnegative().nullable(),
  removed: z.number().int().nonnegative().nullable(),
  binary: z.boolean(),
});
export type ChangedFile = z.infer<typeof ChangedFile>;

/** GET /v1/sessions/:id/diff: the session's work against the commit its workspace started from. */
export const SessionDiff = z.strictObject({
  sessionId: z.string(),
  baseCommit: z.string(),
  branch: z.string().nullable(),
  files: z.array(ChangedFile).max(100_000),
  /** How many more files differ than `files` lists (past its 100,000); absent when it lists them all. */
  moreFiles: z.number().int().positive().optional(),
  /** Unified diff (git's), binary files (and files whose changes are not UTF-8) named but not shown, cut at the size limit. */
  diff: z.string(),
  /** True when `diff` was cut at the size limit. */
  truncated: z.boolean(),
});
export type SessionDiff = z.infer<typeof SessionDiff>;

/**
 * DELETE /v1/sessions/:id: what became of the deleted session's workspace, as its release ended
 * (null: it had none). Kept `in_use` stays with a session sharing it (a fork and its source), kept
 * `checked_out_elsewhere` with the checkout its branch moved to; a delete leaves nothing else behind.
 */
export const DeletedSession = z.strictObject({
  sessionId: z.string(),
  workspaceStatus: WorkspaceStatus.nullable(),
});
export type DeletedSession = z.infer<typeof DeletedSession>;

/**
 * Where a session's agent runs: the prepared workspace's directory, or, for a session recorded
 * before workspaces were tracked, the directory it named.
 */
export function agentDirectory(workspace: Workspace, status: WorkspaceStatus | null): string {
  if (status) return status.directory;
  return workspace.kind === 'directory' ? workspace.path : workspace.repository;
}

/**
 * The directories a host may name a session by when it resumes or loads it: where its agent runs
 * and, for a worktree session, the repository the worktree was made from (what the host asked for
 * it by). Compared by the caller, which can resolve links on its own machine.
 */
export function sessionDirectories(workspace: Workspace, status: WorkspaceStatus | null): string[] {
  const own = agentDirectory(workspace, status);
  const repository = status?.worktree?.repository;
  return repository === undefined ? [own] : [own, repository];
}
