import {
  agentDirectory,
  AgentError,
  type EventBodyOfType,
  type InteractionSnapshot,
  type OpenSessionCommand,
  PermissionMode,
  type SessionConfiguration,
  type SessionSnapshot,
  type Workspace,
  type WorkspaceStatus,
  describeConfiguration,
  isOpenInteraction,
  sessionConfigurationKeys,
  zeroUsage,
} from '@tether/protocol';
import type {
  AgentProviderV1,
  AgentProviderV1Session,
  AgentProviderV1SessionOptions,
  AgentProviderV1StopOptions,
  AgentProviderV1StopReason,
} from '@tether/provider-spec';
import type { InteractionRecord, RunRecord, SessionRecord, TetherStore } from '../store/tether-store.js';
import { sessionEvents } from './session-events.js';

/** Where a provider session's output goes. */
export type ProviderOutput = Required<
  Pick<AgentProviderV1SessionOptions, 'emit' | 'messageEnded' | 'agentStartedTurn'>
>;

export function createSessionRecord(
  command: OpenSessionCommand,
  context: {
    sessionId: string;
    provider: string;
    workspace: Workspace;
    workspaceStatus: WorkspaceStatus;
    at: string;
  },
): SessionRecord {
  const configuration: Record<string, unknown> = {};
  for (const key of sessionConfigurationKeys) {
    if (command[key] !== undefined) configuration[key] = command[key];
  }
  return {
    sessionId: context.sessionId,
    provider: context.provider,
    workspace: context.workspace,
    workspaceStatus: context.workspaceStatus,
    configuration: configuration as SessionConfiguration,
    ephemeral: command.ephemeral ?? false,
    redactInput: command.redactInput ?? false,
    state: 'idle',
    activeRunId: null,
    permissionMode: null,
    model: null,
    liveProcess: null,
    providerSessionId: null,
    forkedFrom: null,
    copyConversation: null,
    usage: zeroUsage,
    title: null,
    lastRun: null,
    lastSeq: 0,
    createdAt: context.at,
    updatedAt: context.at,
    lastActivityAt: context.at,
  };
}

/**
 * A fork's record: the source's provider, workspace, settings and title, a conversation of its own
 * (copied from `copyConversation` when its agent first starts), nothing run yet.
 */
export function createForkRecord(
  source: SessionRecord,
  fork: {
    sessionId: string;
    at: string;
    forkedFrom: NonNullable<SessionRecord['forkedFrom']>;
    copyConversation: SessionRecord['copyConversation'];
  },
): SessionRecord {
  return {
    ...source,
    sessionId: fork.sessionId,
    state: 'idle',
    activeRunId: null,
    liveProcess: null,
    providerSessionId: null,
    forkedFrom: fork.forkedFrom,
    copyConversation: fork.copyConversation,
    // The source's follow-ups wait for the source's run; the fork has none of them.
    queuedInputs: [],
    // Measured on the source's conversation as it stands, not on the copy (which may end earlier).
    contextUsage: null,
    usage: zeroUsage,
    lastRun: null,
    lastSeq: 0,
    createdAt: fork.at,
    updatedAt: fork.at,
    lastActivityAt: fork.at,
  };
}

function toInteractionSnapshot(interaction: InteractionRecord): InteractionSnapshot {
  return {
    interactionRef: interaction.interactionRef,
    sessionId: interaction.sessionId,
    runId: interaction.runId,
    status: interaction.status,
    request: interaction.request,
    requestedAt: interaction.requestedAt,
    settledAt: interaction.settledAt,
  };
}

export function toSessionSnapshot(entry: SessionEntry, lastSeq: number): SessionSnapshot {
  return snapshotOfRecord(entry.record, entry.openInteractions(), lastSeq, entry.modesRequiringRestart());
}

/**
 * A snapshot from a record and its open interactions (a closed session read from the store has
 * none, and no agent that could need a restart).
 */
export function snapshotOfRecord(
  record: SessionRecord,
  openInteractions: readonly InteractionRecord[],
  lastSeq: number,
  modesRequiringRestart: PermissionMode[] = [],
): SessionSnapshot {
  return {
    sessionId: record.sessionId,
    provider: record.provider,
    state: record.state,
    workspace: record.workspace,
    workspaceStatus: record.workspaceStatus,
    configuration: describeConfiguration(record.configuration),
    ephemeral: record.ephemeral,
    activeRunId: record.activeRunId,
    model: record.model,
    permissionMode: record.permissionMode,
    modesRequiringRestart,
    pendingInteractions: openInteractions.map(toInteractionSnapshot),
    queuedInputs: [...(record.queuedInputs ?? [])],
    limits: record.limits ?? null,
    contextUsage: record.contextUsage ?? null,
    providerSessionId: record.providerSessionId,
    forkedFrom: record.forkedFrom,
    usage: record.usage,
    title: record.title,
    lastRun: record.lastRun,
    lastSeq,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastActivityAt: record.lastActivityAt,
  };
}

/**
 * A session held in memory: its record (the source of truth for decisions), its active run, and
 * the provider session, opened lazily (after a restart, a session costs a row until its next turn).
 */
export class SessionEntry {
  record: SessionRecord;
  activeRun: RunRecord | null = null;
  readonly provider: AgentProviderV1 | null;
  /** Diagnostic codes already recorded for this session (recorded once, not once per occurrence). */
  readonly notedDiagnostics = new Set<string>();
  /** This session's interactions by reference (all of them once loaded: references stay known until close). */
  readonly interactions = new Map<string, InteractionRecord>();
  private interactionsLoaded: Promise<void> | null = null;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Tool calls of the active run invoked and not ended yet, by toolUseId (ended `failed` with their run: withRunEndCancellations). */
  readonly openToolCalls = new Map<
    string,
    { readonly runId: string; readonly toolName: string; readonly parentToolUseId: string | undefined }
  >();
  /** Runs whose stop was requested (the intent is recorded once, however many interrupts arrive). */
  readonly interruptRequested = new Set<string>();
  /** Runs the runtime's own shutdown asked to stop: their end says so (runtime_stopped), not as a caller's interrupt would. */
  readonly stoppedByShutdown = new Set<string>();
  /** The active run's control name when it is a control (a slash command), not a turn: it takes no steer. */
  activeControl: { readonly runId: string; readonly name: string } | null = null;
  /**
   * The modes set_permission_mode commands are asking the agent for, each as often as asked: the
   * agent's own report of such a change is the command's doing, recorded by the command (source:
   * command), not as the agent's.
   */
  readonly modesBeingSet: PermissionMode[] = [];
  /** The active run while it waits for an agent process slot (run.queued, until session.process_started): nothing reached the agent yet. */
  runWaitingForProcess: string | null = null;
  /**
   * The run recorded and not yet handed to the agent (its worktree's baseline being taken, its
   * agent being opened), with what settles once it is: the agent knows nothing of it until then, so
   * a steer for it waits for that, and a stop asked meanwhile is kept for the handover to honour.
   */
  private handover: { readonly runId: string; readonly done: Promise<void> } | null = null;
  /** Settles when the last provider stop has finished. */
  teardown: Promise<void> = Promise.resolve();
  /** Provider stops not yet finished (the entry must stay in memory until they are). */
  private stopsInProgress = 0;
  /** Deleted, or never stored (its opening failed): a listing that saw it earlier leaves it out. */
  removed = false;
  /** The lifecycle change under way (a reopen, a fork of it, its delete): the next one waits for it. */
  private lifecycleChanges: Promise<unknown> = Promise.resolve();
  private opening: Promise<AgentProviderV1Session> | null = null;
  /** The provider session once opened (until stopped): what reads ask about the agent's state. */
  private opened: AgentProviderV1Session | null = null;
  private binding: { active: boolean } | null = null;

  constructor(record: SessionRecord, provider: AgentProviderV1 | null) {
    this.record = record;
    this.provider = provider;
  }
  /**
   * Runs `work` after the session's lifecycle changes before it, alone: a reopen, a fork of the
   * session and its delete each decide on what the one before left. Run concurrently, a delete
   * removed a session a reopen had just made open again (on PostgreSQL its log then started over at
   * seq 1), or the worktree a fork had just been given.
   */
  changeLifecycle<Result>(work: () => Promise<Result>): Promise<Result> {
    const change = this.lifecycleChanges.then(work, work);
    this.lifecycleChanges = change.catch(() => undefined);
    return change;
  }

  /** Loads the session's interactions from the store once (a session loaded after a restart starts without them). */
  loadInteractions(store: TetherStore): Promise<void> {
    this.interactionsLoaded ??= store.listInteractions(this.record.sessionId).then((stored) => {
      for (const interaction of stored) {
        if (!this.interactions.has(interaction.interactionRef))
          this.interactions.set(interaction.interactionRef, interaction);
      }
    });
    return this.interactionsLoaded;
  }

  markInteractionsLoaded(): void {
    this.interactionsLoaded = Promise.resolve();
  }

  /**
   * The calls of `runId` open in the stored log, for a runtime that did not see them start (a
   * predecessor's, or output it could not store): the run's end then ends them, as it would have.
   */
  async loadOpenToolCalls(store: TetherStore, runId: string): Promise<void> {
    this.openToolCalls.clear();
    for await (const event of sessionEvents(store, this.record.sessionId))
      if (event.type === 'run.tool_activity' && event.runId === runId) this.noteToolActivity(event);
  }

  /** Keeps openToolCalls: a call is open from its `invoked` until it succeeds or fails. */
  noteToolActivity(activity: EventBodyOfType<'run.tool_activity'>): void {
    if (activity.status === 'invoked')
      this.openToolCalls.set(activity.toolUseId, {
        runId: activity.runId,
        toolName: activity.toolName,
        parentToolUseId: activity.parentToolUseId,
      });
    else this.openToolCalls.delete(activity.toolUseId);
  }

  openInteractions(): InteractionRecord[] {
    return [...this.interactions.values()].filter((interaction) => isOpenInteraction(interaction.status));
  }

  openInteractionCount(): number {
    let count = 0;
    for (const interaction of this.interactions.values()) if (isOpenInteraction(interaction.status)) count += 1;
    return count;
  }

  setTimer(interactionRef: string, timer: NodeJS.Timeout): void {
    this.clearTimer(interactionRef);
    this.timers.set(interactionRef, timer);
  }

  clearTimer(interactionRef: string): void {
    const timer = this.timers.get(interactionRef);
    if (timer) clearTimeout(timer);
    this.timers.delete(interactionRef);
  }

  clearAllTimers(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  /** Nothing attached to the session any more (provider, stop in progress, timer): it may leave memory. */
  isQuiet(): boolean {
    return this.opening === null && this.stopsInProgress === 0 && this.timers.size === 0;
  }

  /** A copy of what a command may change, to restore if its write fails. */
  snapshotState(): {
    record: SessionRecord;
    activeRun: RunRecord | null;
    interactions: Map<string, InteractionRecord>;
  } {
    return { record: this.record, activeRun: this.activeRun, interactions: new Map(this.interactions) };
  }

  /** Counts rebuilds from the store: a command failing after one must not put its older copy back. */
  rebuilds = 0;

  restoreState(state: ReturnType<SessionEntry['snapshotState']>): void {
    this.record = state.record;
    this.activeRun = state.activeRun;
    this.interactions.clear();
    for (const [ref, interaction] of state.interactions) this.interactions.set(ref, interaction);
  }

  /** Marks the run as not handed to the agent yet; the returned function says it now is. */
  beginHandover(runId: string): () => void {
    let handedOver = () => {};
    const done = new Promise<void>((resolve) => {
      handedOver = resolve;
    });
    const handover = { runId, done };
    this.handover = handover;
    return () => {
      if (this.handover === handover) this.handover = null;
      handedOver();
    };
  }

  /** Settles once the run has been handed to the agent (at once for a run already handed over, or any other). */
  handedOver(runId: string): Promise<void> {
    return this.handover?.runId === runId ? this.handover.done : Promise.resolve();
  }

  /** The run is recorded and not yet handed to the agent: the agent knows nothing of it, nor of its steers. */
  isHandingOver(runId: string): boolean {
    return this.handover?.runId === runId;
  }

  /** Replaces what memory holds with what the store holds (after memory applied output the store never took). */
  rebuildFrom(stored: ReturnType<SessionEntry['snapshotState']>): void {
    this.rebuilds += 1;
    this.clearAllTimers();
    this.restoreState(stored);
    this.markInteractionsLoaded();
    this.interruptRequested.clear();
    // What memory saw may not be what was stored: read back with the active run (loadOpenToolCalls).
    this.openToolCalls.clear();
  }

  /**
   * The modes the provider says its agent cannot enter live now. Asked at read time (the provider
   * knows whether its process runs and how it was launched); none while no provider session is open.
   */
  modesRequiringRestart(): PermissionMode[] {
    const session = this.opened;
    return session === null ? [] : PermissionMode.options.filter((mode) => session.requiresRestartFor(mode));
  }

  /** Opens the provider session; its output reaches `output` until the session is stopped. */
  attachProvider(output: ProviderOutput): Promise<AgentProviderV1Session> {
    const provider = this.provider;
    if (!provider) {
      return Promise.reject(
        new AgentError({
          code: 'provider_unavailable',
          message: `This session was opened with the "${this.record.provider}" provider, which this runtime was not given. Start the runtime with that provider.`,
          details: { reason: 'provider_not_configured' },
        }),
      );
    }
    const binding = { active: true };
    this.binding = binding;
    const opening = provider.doOpenSession({
      sessionId: this.record.sessionId,
      workspace: { kind: 'directory', path: agentDirectory(this.record.workspace, this.record.workspaceStatus) },
      configuration: this.record.configuration,
      ephemeral: this.record.ephemeral,
      // A pending copy (a fork not yet started, a rewind) is started from instead of resuming; an
      // ephemeral session's agent kept no transcript to resume (its context went with its process).
      resumeProviderSessionId:
        this.record.copyConversation || this.record.ephemeral ? null : this.record.providerSessionId,
      copyConversation: this.record.copyConversation,
      // A new process gets only what is left of the session's budget (maxCostUsd).
      spentCostUsd: this.record.usage.costUsd ?? 0,
      emit: (part) => {
        if (binding.active) output.emit(part);
      },
      messageEnded: () => {
        if (binding.active) output.messageEnded();
      },
      agentStartedTurn: () => (binding.active ? output.agentStartedTurn() : null),
    });
    this.opening = opening;
    opening.then(
      (session) => {
        if (this.opening === opening) this.opened = session;
      },
      () => {
        if (this.opening === opening) this.opening = null;
      },
    );
    return opening;
  }

  ensureProvider(output: ProviderOutput): Promise<AgentProviderV1Session> {
    return this.opening ?? this.attachProvider(output);
  }

  /**
   * Stops the provider session, if any; output arriving meanwhile is ignored. Concurrent callers
   * share one teardown; if it fails, the session stays stoppable so a retry can finish it.
   */
  stopProvider(reason: AgentProviderV1StopReason, options: AgentProviderV1StopOptions = {}): Promise<void> {
    const opening = this.opening;
    if (!opening) return this.teardown;
    this.opening = null;
    this.opened = null;
    if (this.binding) this.binding.active = false;
    const previous = this.teardown.catch(() => undefined);
    this.stopsInProgress += 1;
    this.teardown = (async () => {
      try {
        await previous;
        let session: AgentProviderV1Session;
        try {
          session = await opening;
        } catch {
          return; // A session that failed to open has nothing to stop.
        }
        try {
          await session.doStop(reason, options);
        } catch (error) {
          if (this.opening === null) {
            this.opening = opening;
            this.opened = session;
          }
          throw error;
        }
      } finally {
        this.stopsInProgress -= 1;
      }
    })();
    return this.teardown;
  }
}
