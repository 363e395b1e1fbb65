import { AgentError, type WorkspaceStatus } from '@tether/protocol';
import type { EventWriter } from '../log/event-writer.js';
import type { SessionRecord, TetherStore } from '../store/tether-store.js';
import type { WorkspaceAcquirers } from '../workspace/workspace-acquirers.js';
import type { SessionCache } from './session-cache.js';
import type { SessionEntry } from './session-entry.js';
import type { SessionLog } from './session-log.js';

/** What restoring and releasing a session's workspace works with. */
export interface WorkspaceParts {
  readonly workspaces: WorkspaceAcquirers;
  readonly entries: SessionCache;
  readonly log: SessionLog;
  readonly writer: EventWriter;
  readonly store: TetherStore;
  /** Other runtimes share the store: their open sessions are in it, not in this one's memory. */
  readonly sharedStore: boolean;
}

/**
 * The session's workspace made ready again (a worktree re-created if it was removed): before a
 * closed session is reopened or forked. Throws what the acquirer says when it cannot be; null for
 * a session recorded before workspaces were tracked.
 */
export async function restoreWorkspace(
  workspaces: WorkspaceAcquirers,
  record: SessionRecord,
): Promise<WorkspaceStatus | null> {
  const status = record.workspaceStatus;
  if (status === null) return null;
  return workspaces.of(status.kind).restore(status, { sessionId: record.sessionId });
}

/**
 * At start-up, for an open session: its workspace restored, recorded when that changed it. One
 * that cannot be is a diagnostic and the session stays (its next turn fails where the agent runs).
 */
export async function restoreAtStartup(parts: WorkspaceParts, entry: SessionEntry): Promise<void> {
  const status = entry.record.workspaceStatus;
  if (status?.state !== 'ready') return;
  try {
    const restored = await restoreWorkspace(parts.workspaces, entry.record);
    if (restored && !sameStatus(restored, status)) recordStatus(parts, entry, 'session.workspace_ready', restored);
  } catch {
    parts.log.stage(entry, [{ type: 'diagnostic', level: 'error', code: 'workspace.restore_failed' }]);
  }
}

/**
 * After close_session stopped the agent: the workspace released (removed when it holds no work,
 * kept otherwise) and session.workspace_released recorded. A failure is a diagnostic and the
 * workspace stays ready: closing the session again retries, and delete releases it.
 */
export async function releaseAtClose(parts: WorkspaceParts, entry: SessionEntry): Promise<void> {
  const status = entry.record.workspaceStatus;
  if (status?.state !== 'ready') return;
  try {
    const released = await parts.workspaces
      .of(status.kind)
      .release(status, { discardChanges: false, inUse: await inUseByAnother(parts, entry, status) });
    recordStatus(parts, entry, 'session.workspace_released', released);
  } catch {
    parts.log.stage(entry, [{ type: 'diagnostic', level: 'warning', code: 'workspace.release_failed' }]);
    await parts.writer.flush();
    return;
  }
  await parts.writer.flush();
  await toldToTheClosedSharers(parts, entry, entry.record.workspaceStatus);
}

/**
 * A fork and its source share one worktree: the one closed first kept it for the other (in_use). When
 * the last of them releases it, what became of it is theirs too, or they would go on saying it is
 * kept for a session that no longer works in it. Closed sessions may have left memory (with a shared
 * store none stays): those are read back from the store.
 */
async function toldToTheClosedSharers(
  parts: WorkspaceParts,
  entry: SessionEntry,
  released: WorkspaceStatus | null,
): Promise<void> {
  if (released === null || !announcesWorkspace(released)) return;
  if (released.state === 'kept' && released.keptBecause === 'in_use') return;
  const keptForAnother = (record: SessionRecord) =>
    record.sessionId !== entry.record.sessionId &&
    record.state === 'closed' &&
    record.workspaceStatus?.directory === released.directory &&
    record.workspaceStatus.state === 'kept' &&
    record.workspaceStatus.keptBecause === 'in_use';
  // Told after the release is recorded, each on its own: telling one that cannot be told now (its
  // lease held elsewhere for a moment, the store away) neither undoes the release nor skips the rest.
  const sharers = await sessionsInDirectory(parts, released.directory, keptForAnother).catch(() => []);
  for (const sessionId of sharers) {
    const other = await parts.entries.acquire(sessionId).catch(() => undefined);
    if (other === undefined) continue;
    try {
      if (other.removed || !keptForAnother(other.record)) continue;
      recordStatus(parts, other, 'session.workspace_released', released);
      // Written before the pin goes: a closed session unpinned may leave memory, and what it staged with it.
      await parts.writer.flush();
    } catch {
      // Its record says kept in_use until its next reopen or delete releases the workspace again.
    } finally {
      parts.entries.release(other);
    }
  }
}

/**
 * Before a closed session is deleted: its workspace released once more (work may have been added
 * or removed since the close), with the caller's discard. Refused with workspace_has_changes while
 * it holds work and the caller did not say to discard it; nothing is removed then.
 */
export async function releaseForDelete(
  parts: WorkspaceParts,
  entry: SessionEntry,
  discardChanges: boolean,
): Promise<WorkspaceStatus | null> {
  const status = entry.record.workspaceStatus;
  if (status === null || status.state === 'removed') return status;
  const acquirer = parts.workspaces.of(status.kind);
  // A release that fails refuses the delete, discarding or not: the session is the only record of
  // where its worktree and branch are, and they would be left behind unnamed.
  const released = await acquirer.release(status, {
    discardChanges,
    forDelete: true,
    inUse: await heldByAnother(parts, entry, status),
  });
  // Kept locked, it would be left with its branch and no session naming it: its owner says what happens to it.
  if (
    released.keptBecause === 'uncommitted_changes' ||
    released.keptBecause === 'commits_beyond_base' ||
    released.keptBecause === 'locked'
  )
    throw workspaceHasChanges(released, released.keptBecause);
  if (!sameStatus(released, status)) {
    recordStatus(parts, entry, 'session.workspace_released', released);
    await parts.writer.flush();
    await toldToTheClosedSharers(parts, entry, released);
  }
  return released;
}

/**
 * Whether a workspace's changes are told as events (session.workspace_ready and _released): those
 * Tether makes are; a plain directory is named by session.opened and never changed by Tether, so
 * its status is kept on the record only and existing logs read as they always did.
 */
export function announcesWorkspace(status: WorkspaceStatus): boolean {
  return status.kind !== 'directory';
}

function recordStatus(
  parts: WorkspaceParts,
  entry: SessionEntry,
  type: 'session.workspace_ready' | 'session.workspace_released',
  workspace: WorkspaceStatus,
): void {
  if (announcesWorkspace(workspace)) parts.log.stage(entry, [{ type, workspace }]);
  else parts.log.stageAmended(entry, [], (record) => ({ ...record, workspaceStatus: workspace }));
}

/**
 * Another open session works in the same directory (a fork shares its source's): it must stay. With
 * a shared store, one open on another runtime counts too: its agent may be writing there now.
 */
async function inUseByAnother(parts: WorkspaceParts, entry: SessionEntry, status: WorkspaceStatus): Promise<boolean> {
  const open = (record: SessionRecord) => record.sessionId !== entry.record.sessionId && record.state !== 'closed';
  // A store this runtime holds alone has every open session in memory; a plain directory is never removed.
  if (!parts.sharedStore || !announcesWorkspace(status))
    return parts.entries
      .entries()
      .some((other) => other.record.workspaceStatus?.directory === status.directory && open(other.record));
  return (await sessionsInDirectory(parts, status.directory, open)).length > 0;
}

/**
 * Before a delete: another session, open or closed, still names this workspace as its own (a fork and
 * its source share one). A closed one that kept it for its work is its owner as much as the session
 * deleted, so the workspace stays with it, discard or not. Closed sessions may have left memory: the
 * store is read for them, once per delete.
 */
async function heldByAnother(parts: WorkspaceParts, entry: SessionEntry, status: WorkspaceStatus): Promise<boolean> {
  if (!announcesWorkspace(status)) return inUseByAnother(parts, entry, status);
  const holding = (record: SessionRecord) =>
    record.sessionId !== entry.record.sessionId && record.workspaceStatus?.state !== 'removed';
  return (await sessionsInDirectory(parts, status.directory, holding)).length > 0;
}

/**
 * The ids of the sessions whose workspace is `directory` and whose record matches: the one in memory
 * where there is one (it may be ahead of the store), the stored one otherwise.
 */
async function sessionsInDirectory(
  parts: WorkspaceParts,
  directory: string,
  matches: (record: SessionRecord) => boolean,
): Promise<string[]> {
  const inMemory = new Map(parts.entries.entries().map((other) => [other.record.sessionId, other.record]));
  const ids = new Set<string>();
  for (const record of inMemory.values())
    if (record.workspaceStatus?.directory === directory && matches(record)) ids.add(record.sessionId);
  for (const stored of await parts.store.listSessionsInDirectory(directory))
    if (!inMemory.has(stored.sessionId) && matches(stored)) ids.add(stored.sessionId);
  return [...ids];
}

function workspaceHasChanges(
  status: WorkspaceStatus,
  why: 'uncommitted_changes' | 'commits_beyond_base' | 'locked',
): AgentError {
  const where = status.worktree
    ? `The worktree ${status.worktree.path} (branch ${status.worktree.branch})`
    : `The workspace ${status.directory}`;
  const discard =
    'delete again with discardWorkspaceChanges (tether delete --discard-changes; DELETE /v1/sessions/:id?discardWorkspaceChanges=true) to remove it and its branch';
  const message =
    why === 'locked'
      ? `${where} is locked (git worktree lock): its owner asked that it stay. Unlock it (git worktree unlock) and delete again, or ${discard} all the same.`
      : why === 'uncommitted_changes'
        ? `${where} holds uncommitted changes. Merge or copy what you want to keep, then ${discard}.`
        : `${where} holds commits beyond the commit it started from that neither the branch checked out in the repository's own folder nor a tag holds. Merge them into that branch (or tag them) and delete again, or ${discard}.`;
  return new AgentError({ code: 'workspace_has_changes', message, details: { reason: why } });
}

function sameStatus(left: WorkspaceStatus, right: WorkspaceStatus): boolean {
  return JSON.stringify(left) === JSON.stringify(right);
}
