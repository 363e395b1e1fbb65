import { AgentError, type EventBody, type ProtocolEvent, type WorkspaceStatus } from '@tether/protocol';
import type { WorkspaceAcquirer, WorkspaceBaseline } from '../workspace/workspace-acquirer.js';
import type { WorkspaceAcquirers } from '../workspace/workspace-acquirers.js';
import type { SessionEntry } from './session-entry.js';
import type { SessionLog } from './session-log.js';

/** At most this many files are listed in a run's run.files_changed (truncated says if more changed). */
const runChangedFilesLimit = 1000;

interface TrackedRun {
  readonly entry: SessionEntry;
  readonly acquirer: WorkspaceAcquirer;
  readonly baseline: Promise<WorkspaceBaseline | null>;
}

/**
 * What each run changed in its workspace, for the kinds that can tell (a git worktree): a baseline
 * before the turn reaches the agent, compared once the run has ended (run.files_changed, and the
 * workspace's count of files changed against its base). A failure is a diagnostic, never a failed
 * run. A kind without baselines (a plain directory) costs nothing here.
 */
export class RunWorkspaceChanges {
  private readonly workspaces: WorkspaceAcquirers;
  private readonly log: SessionLog;
  private readonly tracked = new Map<string, TrackedRun>();
  /** Per session: the last comparison still being made (the next baseline and the release wait for it). */
  private readonly comparing = new Map<string, Promise<void>>();

  constructor(parts: { workspaces: WorkspaceAcquirers; log: SessionLog }) {
    this.workspaces = parts.workspaces;
    this.log = parts.log;
  }

  /**
   * Takes the run's baseline, when its workspace's acquirer takes them; null (at once) otherwise.
   * The promise settles when the turn may reach the agent, and never rejects.
   */
  begin(entry: SessionEntry, runId: string): Promise<unknown> | null {
    const status = entry.record.workspaceStatus;
    const acquirer = status?.state === 'ready' ? this.acquirerOf(status) : undefined;
    if (!status || !acquirer?.baseline || !acquirer.changedSince) return null;
    const previous = this.comparing.get(entry.record.sessionId) ?? Promise.resolve();
    // After the previous run's comparison: this run's edits must not count towards that one.
    const baseline = previous.then(() =>
      acquirer.baseline!(status).catch((error: unknown) => {
        this.note(entry, runId, 'workspace.baseline_failed', error);
        return null;
      }),
    );
    this.tracked.set(runId, { entry, acquirer, baseline });
    return baseline;
  }

  /** Sees the runs end (as their run.completed is published) and compares their workspaces. */
  published(events: readonly ProtocolEvent[]): void {
    if (this.tracked.size === 0) return;
    for (const event of events) {
      if (event.type !== 'run.completed') continue;
      const run = this.tracked.get(event.runId);
      if (!run) continue;
      this.tracked.delete(event.runId);
      const sessionId = run.entry.record.sessionId;
      const comparison = this.compare(run, event.runId)
        .catch(() => undefined)
        .finally(() => {
          if (this.comparing.get(sessionId) === comparison) this.comparing.delete(sessionId);
        });
      this.comparing.set(sessionId, comparison);
    }
  }

  /** Settles once the session's runs (all sessions' without an id) are compared: before a release or a shutdown. */
  async settled(sessionId?: string): Promise<void> {
    if (sessionId !== undefined) return this.comparing.get(sessionId);
    await Promise.all(this.comparing.values());
  }

  private async compare(run: TrackedRun, runId: string): Promise<void> {
    const baseline = await run.baseline;
    const status = run.entry.record.workspaceStatus;
    if (baseline === null || status?.state !== 'ready') return;
    let body: EventBody;
    let changedFiles: number | null = status.changedFiles;
    try {
      const changes = await run.acquirer.changedSince!(status, baseline, { limit: runChangedFilesLimit });
      body = { type: 'run.files_changed', runId, files: changes.files, truncated: changes.truncated };
      // The whole list against the base (not this run's): what lists and headers count. maxBytes 0
      // asks for the file list only, without the patch.
      if (run.acquirer.diff) {
        const diff = await run.acquirer.diff(status, { sessionId: run.entry.record.sessionId, maxBytes: 0 });
        changedFiles = diff.files.length;
      }
    } catch (error) {
      this.note(run.entry, runId, 'workspace.changes_unreadable', error);
      return;
    }
    this.log.stageAmended(run.entry, [body], (record) =>
      record.workspaceStatus?.state === 'ready'
        ? { ...record, workspaceStatus: { ...record.workspaceStatus, changedFiles } }
        : record,
    );
  }

  private acquirerOf(status: WorkspaceStatus): WorkspaceAcquirer | undefined {
    try {
      return this.workspaces.of(status.kind);
    } catch {
      return undefined;
    }
  }

  /**
   * A warning; only a note (info) when the host's shutdown stopped git: the run was stopped with it, and
   * a warning that the files "could not be read" would send the user looking for a problem git never had.
   */
  private note(entry: SessionEntry, runId: string, code: string, error: unknown): void {
    const stoppedByShutdown = AgentError.isInstance(error) && error.code === 'runtime_stopped';
    this.log.stage(entry, [{ type: 'diagnostic', runId, level: stoppedByShutdown ? 'info' : 'warning', code }]);
  }
}
