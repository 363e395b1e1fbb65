import {
  AgentError,
  type Command,
  type EventBody,
  type PermissionMode,
  type ModelList,
  type StoredBlob,
  type ProtocolEvent,
  type Receipt,
  type RunSnapshot,
  type SerializedAgentError,
  type DeleteSessionOptions,
  type DeletedSession,
  type SessionDiff,
  type SessionSnapshot,
  type WorkspaceStatus,
  checkSubscriptionStart,
  diffLimits,
  newCommandId,
  newRunId,
  parseCommand,
  toAgentError,
} from '@tether/protocol';
import type {
  AgentProviderV1,
  AgentProviderV1Part,
  AgentProviderV1Session,
  AgentProviderV1StopOptions,
} from '@tether/provider-spec';
import { EventWriter } from '../log/event-writer.js';
import { SubscriptionHub } from '../log/subscription-hub.js';
import { decideAgentRun } from '../state/session-machine.js';
import { createInMemoryStore } from '../store/in-memory-store.js';
import type { SessionCounts, StoredReceipt, TetherStore } from '../store/tether-store.js';
import { type CommandFingerprint, lazyFingerprint } from './command-fingerprint.js';
import { rehearseFirstTurn } from './first-turn-rehearsal.js';
import {
  type InteractionPolicy,
  type ProviderOutputHandlers,
  acceptProviderPart,
  noteOnce,
} from './provider-output.js';
import { InputQueue } from './input-queue.js';
import type {
  AgentRuntime,
  AgentRuntimeOptions,
  FollowOptions,
  LeaseChange,
  SubscribeOptions,
} from './runtime-types.js';
import type { ProviderOutput, SessionEntry } from './session-entry.js';
import { SessionCache } from './session-cache.js';
import type { ListSessionsOptions } from './session-listing.js';
import { SessionReads } from './session-reads.js';
import { eventPageOptions, listingOptions, sessionIdArgument } from './read-arguments.js';
import { providerTable } from './provider-table.js';
import { type SessionRecoveryParts, loadSession, recoverOpenSessions } from './session-recovery.js';
import { SessionOwnership } from './session-ownership.js';
import { lostSessionsOf } from '../store/lease-lost.js';
import { isReceiptExists } from '../store/receipt-exists.js';
import { dropLostSessions } from './lost-sessions.js';
import { OrphanSweep } from './orphan-sweep.js';
import { RemoteAppends } from './remote-appends.js';
import type { CommandContext } from './commands/command-context.js';
import { runCommand } from './commands/command-table.js';
import { denyOnTimeout } from './commands/deliver-answer.js';
import {
  SessionLog,
  now,
  runCutOffByShutdown,
  runNotHandedOverByShutdown,
  runNotStartedByShutdown,
  withRunEndCancellations,
} from './session-log.js';
import { commandIdReused, runtimeStopped, sessionNotFound, unknownProvider, unsupported } from './runtime-errors.js';
import { RunWaiters } from './run-waiters.js';
import { ForcedStoreBound } from './forced-store-bound.js';
import { OpenSessionLimit, defaultMaxOpenSessions } from './open-session-limit.js';
import { ShutdownGrace, type ShutdownOptions } from './shutdown-grace.js';
import { StoreFailureRepair } from './store-failure-repair.js';
import { TypedCommands } from './typed-commands.js';
import { WorkspaceAcquirers } from '../workspace/workspace-acquirers.js';
import { createKeyedQueue } from '../workspace/keyed-queue.js';
import { RunWorkspaceChanges } from './run-workspace-changes.js';
import { type WorkspaceParts, releaseAtClose, releaseForDelete } from './session-workspace.js';

/** A command's receipt as the store keeps it: its fingerprint is computed here, when it is written. */
function storedReceipt(receipt: Receipt, fingerprint: CommandFingerprint): StoredReceipt {
  return { commandId: receipt.commandId, fingerprint: fingerprint(), receipt, at: now() };
}

/** A command sent again: the stored receipt if it is the same command, command_id_reused if not. */
function answerWith(stored: StoredReceipt, fingerprint: CommandFingerprint): Receipt {
  if (stored.fingerprint !== fingerprint()) throw commandIdReused();
  return stored.receipt;
}

/** The receipt whose presence refused the command's commit (the refusal itself should it be gone). */
async function storedReceiptAfter(store: TetherStore, command: Command, refusal: AgentError): Promise<StoredReceipt> {
  const stored = await store.findReceipt(command.commandId);
  if (!stored) throw refusal;
  return stored;
}

class Runtime extends TypedCommands implements AgentRuntime {
  readonly providerNames: readonly string[];
  readonly providers: readonly AgentProviderV1[];
  private readonly observers = new Set<(event: ProtocolEvent) => void>();
  private readonly store: TetherStore;
  private readonly providerMap: Map<string, AgentProviderV1>;
  private readonly policy: InteractionPolicy;
  private readonly hub = new SubscriptionHub();
  private readonly log: SessionLog;
  private readonly writer: EventWriter;
  private readonly entries: SessionCache;
  private readonly reads: SessionReads;
  private readonly runWaiters: RunWaiters;
  private readonly storeFailures: StoreFailureRepair;
  private readonly commands: CommandContext;
  private readonly workspaces: WorkspaceAcquirers;
  private readonly deletesByDirectory = createKeyedQueue();
  private readonly runChanges: RunWorkspaceChanges;
  private readonly inputs: InputQueue;
  private readonly inflight = new Map<string, { fingerprint: CommandFingerprint; promise: Promise<Receipt> }>();
  private readonly ownership: SessionOwnership;
  private readonly onBackgroundError: (error: unknown) => void;
  private readonly onLeaseChange: (change: LeaseChange) => void;
  /** With a store shared by several runtimes: what follows other runtimes' sessions and takes over orphans. */
  private sharing: { sweep: OrphanSweep | null; remote: RemoteAppends; stopLost: () => void } | null = null;
  /** Takes up, with a shared store, the open sessions no live runtime drives (adoptsOrphanedSessions). */
  private readonly adoptsOrphans: boolean;
  private stopped: Promise<void> | null = null;
  private shutdownGrace: ShutdownGrace | null = null;
  private forceStop = false;
  /** A forced stop's waits on the store, each bounded: a store that stopped answering is abandoned. */
  private readonly storeBound: ForcedStoreBound;
  /** beginShutdown was called: nothing new starts (queued inputs are held, slot-waiting runs stopped). */
  private shutdownBegun = false;

  constructor(options: AgentRuntimeOptions, store: TetherStore) {
    super();
    this.store = store;
    this.ownership = new SessionOwnership(store.coordination);
    this.adoptsOrphans = !this.ownership.shared || options.adoptsOrphanedSessions !== false;
    const shared = this.ownership.shared;
    this.onBackgroundError = (error) => options.onBackgroundError?.(toAgentError(error));
    this.storeBound = new ForcedStoreBound(store, this.onBackgroundError);
    this.onLeaseChange = (change) => options.onLeaseChange?.(change);
    this.runWaiters = new RunWaiters(
      (runId) => this.getRun(runId),
      // Another runtime's run ends there: its end may already be stored, unpublished here.
      shared
        ? (sessionId) => void (this.entries.get(sessionId) ? undefined : this.runWaiters.recheck(sessionId))
        : undefined,
    );
    const { byName, defaultProvider: fallback } = providerTable(options.providers, options.defaultProvider);
    this.providerMap = byName;
    this.providerNames = [...this.providerMap.keys()];
    this.providers = [...this.providerMap.values()];
    this.policy = {
      ...(options.interactionTimeoutMs !== undefined ? { interactionTimeoutMs: options.interactionTimeoutMs } : {}),
      ...(options.isSensitive ? { isSensitive: options.isSensitive } : {}),
    };
    this.writer = new EventWriter({
      store,
      onCommitted: (events) => this.publish(events),
      onDropped: (sessionIds, error) => {
        this.storeFailures.dropped(sessionIds, error);
        options.onBackgroundError?.(error);
      },
      onLeaseLost: (sessionIds) => this.loseSessions(sessionIds, 'refused_commit'),
    });
    this.log = new SessionLog(this.writer);
    this.workspaces = new WorkspaceAcquirers(options.workspaces);
    this.runChanges = new RunWorkspaceChanges({ workspaces: this.workspaces, log: this.log });
    this.inputs = new InputQueue({
      log: this.log,
      writer: this.writer,
      startRun: (entry, runId, work) => void this.runProviderWork(entry, runId, work),
      isStopped: () => this.stopped !== null,
      resident: (sessionId) => this.entries.get(sessionId),
    });
    this.entries = new SessionCache({
      // Shared, a closed session leaves at once: its lease goes back, for any runtime to reopen it.
      closedCapacity: shared ? 0 : (options.closedSessionCacheSize ?? 100),
      load: (sessionId) => loadSession(this.recoveryParts(), sessionId),
      onEvict: (entry) => {
        // Its counter is restored from the row if the session is needed again.
        this.writer.forget(entry.record.sessionId);
        this.ownership.release([entry.record.sessionId]);
      },
    });
    this.reads = new SessionReads({ store, hub: this.hub, writer: this.writer, entries: this.entries, shared });
    this.storeFailures = new StoreFailureRepair({
      store,
      writer: this.writer,
      log: this.log,
      runWaiters: this.runWaiters,
      resident: (sessionId) => this.entries.get(sessionId),
      withSession: (sessionId, work) => this.withSession(sessionId, () => work(this.entries.get(sessionId))),
    });
    this.commands = {
      store,
      writer: this.writer,
      log: this.log,
      entries: this.entries,
      providers: this.providerMap,
      defaultProvider: fallback,
      ownership: this.ownership,
      openSessions: new OpenSessionLimit({
        max: options.maxOpenSessions ?? defaultMaxOpenSessions,
        countOpen: () => this.entries.countOpen(),
      }),
      workspaces: this.workspaces,
      inputs: this.inputs,
      releaseWorkspace: async (entry) => {
        // The last run's comparison reads the workspace: it goes first.
        await this.runChanges.settled(entry.record.sessionId);
        await releaseAtClose(this.workspaceParts(), entry);
      },
      write: async (entry, bodies, receipt, fingerprint, blobs) => {
        await this.log.commit(entry, bodies, storedReceipt(receipt, fingerprint), blobs);
      },
      writeTogether: async (parts, receipt, fingerprint) => {
        await this.log.commitTogether(parts, storedReceipt(receipt, fingerprint));
      },
      outputFor: (entry) => this.outputFor(entry),
      providerSession: (entry) => entry.ensureProvider(this.outputFor(entry)),
      startRun: (entry, runId, work) => void this.runProviderWork(entry, runId, work),
      stopProcess: (entry, reason, options) => this.stopProcess(entry, reason, options),
      isStopped: () => this.stopped !== null,
      runEnded: (runId, timeoutMs) => this.runWaiters.ended(runId, timeoutMs),
    };
  }

  /**
   * Loads the open sessions (closed ones are read when needed), ends what a crashed predecessor
   * left running, and completes its open runs and interactions.
   */
  async load(): Promise<void> {
    // Beside the recovery: a host's first session, often opened right after, then spawns its agent
    // without first waiting on the provider's set-up (and on whatever else the event loop runs meanwhile).
    await Promise.all([
      rehearseFirstTurn(createAgentRuntime),
      // Not adopting, only what its own owner id held (its data dir's process before a crash): any
      // other session is recovered when a command first asks for it, or by a daemon that adopts it.
      this.adoptsOrphans ? recoverOpenSessions(this.recoveryParts()) : this.recoverOwnSessions(),
      this.workspaces.sweepAll(this.onBackgroundError),
      ...this.providers.map((provider) => provider.doPrepare?.().catch(() => undefined)),
    ]);
    const coordination = this.store.coordination;
    if (!coordination) return;
    this.sharing = {
      sweep: !this.adoptsOrphans
        ? null
        : new OrphanSweep({
            coordination,
            isResident: (sessionId) => this.entries.get(sessionId) !== undefined,
            // Through the cache, as a command would: claimed, read and recovered, then let go if closed.
            adopt: async (sessionId) => {
              await this.withSession(sessionId, async () => undefined);
              this.onLeaseChange({ change: 'adopted', sessionId });
            },
            onError: this.onBackgroundError,
          }),
      remote: new RemoteAppends({
        store: this.store,
        coordination,
        isResident: (sessionId) => this.entries.get(sessionId) !== undefined,
        isWatched: (sessionId) => this.hub.subscriberCount(sessionId) > 0 || this.runWaiters.isWaitedOn(sessionId),
        watchedSessions: () => new Set([...this.hub.followedSessions(), ...this.runWaiters.waitedSessions()]),
        publish: (events) => this.publishRemote(events),
        mayHaveMissed: (sessionId) => void this.runWaiters.recheck(sessionId),
        gone: (sessionId) => this.reads.endReadersOf(sessionId),
        onError: this.onBackgroundError,
      }),
      stopLost: coordination.onLost((sessionIds) => this.loseSessions(sessionIds, 'heartbeat')),
    };
  }

  private async recoverOwnSessions(): Promise<void> {
    const own = new Set((await this.store.coordination?.findOwn?.()) ?? []);
    if (own.size > 0) await recoverOpenSessions(this.recoveryParts(), (sessionId) => own.has(sessionId));
  }

  private recoveryParts(): SessionRecoveryParts {
    return { ...this.workspaceParts(), store: this.store, providers: this.providerMap, ownership: this.ownership };
  }

  private loseSessions(sessionIds: readonly string[], noticedBy: 'heartbeat' | 'refused_commit'): void {
    // Told once a loss: the writes still queued for a session dropped already are refused one by one,
    // and the heartbeat notices the same loss later.
    const driven = sessionIds.filter((sessionId) => this.entries.get(sessionId) !== undefined);
    dropLostSessions({ entries: this.entries, writer: this.writer, storeFailures: this.storeFailures }, sessionIds);
    if (driven.length === 0) return;
    this.onLeaseChange({ change: 'lost', sessionIds: driven, noticedBy });
    // Their followers here follow the store from now on, as for any session another runtime drives.
    this.sharing?.remote.handOver(driven);
  }

  private workspaceParts(): WorkspaceParts {
    return {
      workspaces: this.workspaces,
      entries: this.entries,
      log: this.log,
      writer: this.writer,
      store: this.store,
      sharedStore: this.ownership.shared,
    };
  }

  // ---- commands -------------------------------------------------------------------------

  dispatch(raw: unknown): Promise<never> {
    return this.execute(raw) as Promise<never>;
  }

  private async execute(raw: unknown): Promise<Receipt> {
    if (this.stopped) throw runtimeStopped();
    const command = parseCommand(raw);
    const fingerprint = lazyFingerprint(command);
    const running = this.inflight.get(command.commandId);
    if (running) {
      if (running.fingerprint() !== fingerprint()) throw commandIdReused();
      return running.promise;
    }
    const promise = (async () => {
      const sessionId = sessionIdOf(command);
      // Looked at before the receipt: a session held since then took no other runtime's commit meanwhile.
      const heldBefore = sessionId !== undefined && this.entries.get(sessionId) !== undefined;
      const stored = await this.store.findReceipt(command.commandId);
      if (stored) return answerWith(stored, fingerprint);
      if (this.stopped) throw runtimeStopped();
      try {
        return await this.withSession(sessionId, async () => {
          if (sessionId !== undefined) {
            // Claimed (and read) after the lookup: the runtime that held the session until then may
            // have carried this very command out (a client retrying through a load balancer).
            if (this.ownership.shared && !heldBefore) {
              const since = await this.store.findReceipt(command.commandId);
              if (since) return answerWith(since, fingerprint);
            }
            await this.storeFailures.ensureConsistent(sessionId);
          }
          return runCommand(this.commands, command, fingerprint);
        });
      } catch (error) {
        // Another runtime sharing the store stored this command's receipt first: nothing of this run of
        // it was written (the command undid what it had started), and the stored receipt is the answer.
        if (isReceiptExists(error))
          return answerWith(await storedReceiptAfter(this.store, command, error), fingerprint);
        // Another runtime took the session while the command ran: it is the one to send the command to.
        if (sessionId !== undefined && AgentError.isInstance(error) && lostSessionsOf(error).includes(sessionId))
          throw await this.ownership.refusalAfterLoss(sessionId, error);
        throw error;
      }
    })();
    this.inflight.set(command.commandId, { fingerprint, promise });
    try {
      return await promise;
    } finally {
      this.inflight.delete(command.commandId);
    }
  }

  /**
   * Runs a command with its session in memory and pinned there (read back from the store if it
   * was closed and left), so concurrent commands on it share one entry. An unknown id reaches the
   * command's own decision, which refuses it with session_not_found.
   */
  private async withSession<Result>(sessionId: string | undefined, work: () => Promise<Result>): Promise<Result> {
    const entry = sessionId === undefined ? undefined : await this.entries.acquire(sessionId);
    try {
      return await work();
    } finally {
      if (entry) this.entries.release(entry);
    }
  }

  private readonly outputHandlers: ProviderOutputHandlers = {
    onTimeout: (entry, interactionRef) => void denyOnTimeout(this.commands, entry, interactionRef),
    onContractViolation: (entry, runId, error) => {
      this.failRun(entry, runId, error);
      // The run is over for Tether; the agent must not keep working on it unobserved.
      void entry
        .ensureProvider(this.outputFor(entry))
        .then((session) => session.doInterrupt({ runId }))
        .catch(() => undefined);
    },
    // One queued after the shutdown began (its turn was submitted just before) does not start either.
    onQueuedForProcess: (entry, runId) => {
      if (this.shutdownBegun) this.stopForShutdown(entry.record.sessionId, runId);
    },
  };

  private outputFor(entry: SessionEntry): ProviderOutput {
    return {
      emit: (part) => {
        // Output the log cannot take is not applied either: the session is being rebuilt from the store.
        if (this.writer.failureOf(entry.record.sessionId)) return;
        if (!this.inputs.acceptsInputPart(entry, part)) {
          noteOnce(this.log, entry, 'runtime.part_for_unknown_input');
          return;
        }
        acceptProviderPart(this.log, entry, part, this.policy, this.outputHandlers);
        // In the same tick as the run's end: no command sees the session idle before its queue moves on.
        // (A provider may pass anything, even null: the part check above refused it, nothing more to do.)
        if ((part as AgentProviderV1Part | null)?.type === 'run.completed') this.inputs.continueAfterRun(entry);
      },
      messageEnded: () => this.writer.flushSoon(),
      agentStartedTurn: () => this.startAgentRun(entry),
    };
  }

  /**
   * Records a run for a turn the agent began by itself (no input; the agent is already on it), when
   * the session could take a host's turn now; null otherwise, and the turn's output is not recorded.
   */
  private startAgentRun(entry: SessionEntry): string | null {
    const { sessionId, state } = entry.record;
    if (this.stopped !== null || state === 'closed' || this.writer.failureOf(sessionId)) return null;
    const decision = decideAgentRun(entry.record, { newRunId });
    if (decision === null) {
      noteOnce(this.log, entry, 'runtime.agent_turn_not_recorded', 'warning');
      return null;
    }
    this.log.stage(entry, decision.events);
    // What the turn changes in a worktree: its baseline is taken now, while the agent asks the model.
    void this.runChanges.begin(entry, decision.runId);
    return decision.runId;
  }

  /**
   * Hands a run to the provider; a failure to start (no binary, a dead process) fails the run. The
   * provider knows of the run only from the handover on: a stop asked before it (while a worktree's
   * baseline is taken) reached no agent, so the run ends here, interrupted, and never starts.
   */
  private async runProviderWork(
    entry: SessionEntry,
    runId: string,
    work: (session: AgentProviderV1Session) => Promise<void>,
  ): Promise<void> {
    const handedOver = entry.beginHandover(runId);
    try {
      const baseline = this.runChanges.begin(entry, runId);
      const session =
        baseline === null
          ? await entry.ensureProvider(this.outputFor(entry))
          : // The agent may start meanwhile; the turn reaches it only once the baseline is taken.
            (await Promise.all([entry.ensureProvider(this.outputFor(entry)), baseline]))[0];
      if (entry.record.activeRunId !== runId) return;
      // A shutdown began meanwhile: started in its grace, the turn would spawn an agent and reach the
      // model only to be stopped at the grace's end (as a turn waiting for a process slot is not started).
      if (this.shutdownBegun || entry.stoppedByShutdown.has(runId))
        return this.endRun(entry, runId, { outcome: 'interrupted', error: runNotHandedOverByShutdown });
      if (entry.interruptRequested.has(runId)) return this.endRun(entry, runId, { outcome: 'interrupted' });
      // The provider takes the run in the call itself (before its first await), so a steer let through
      // by handedOver() finds it.
      const started = work(session);
      handedOver();
      await started;
    } catch (error) {
      this.failRun(entry, runId, toAgentError(error).toObject());
    } finally {
      handedOver();
    }
  }

  private failRun(entry: SessionEntry, runId: string, error: SerializedAgentError): void {
    this.endRun(entry, runId, { outcome: 'failed', error });
  }

  /** Ends a run the agent never took (or could not): its open interactions and tool calls end with it, and the queue moves on. */
  private endRun(
    entry: SessionEntry,
    runId: string,
    end: { outcome: 'failed'; error: SerializedAgentError } | { outcome: 'interrupted'; error?: SerializedAgentError },
  ): void {
    if (entry.record.activeRunId !== runId) return;
    this.log.stage(entry, withRunEndCancellations(entry, [{ type: 'run.completed', runId, ...end }], 'run_ended'));
    this.inputs.continueAfterRun(entry);
  }

  async requiresRestartFor(sessionId: string, mode: PermissionMode): Promise<boolean> {
    return this.withSession(sessionId, async () => {
      const entry = this.entryOrThrow(sessionId);
      const session = await entry.ensureProvider(this.outputFor(entry));
      return session.requiresRestartFor(mode);
    });
  }

  /** Stops a session's provider; a process the runtime ends is recorded as stopped (its output no longer reaches the log). */
  private async stopProcess(
    entry: SessionEntry,
    reason: 'close' | 'release',
    options: AgentProviderV1StopOptions = {},
  ): Promise<void> {
    await entry.stopProvider(reason, options);
    if (entry.record.liveProcess === null) return;
    this.log.stage(entry, [{ type: 'session.process_stopped', reason: reason === 'close' ? 'closed' : 'released' }]);
    await this.writer.flush();
  }

  // ---- publishing and reads -------------------------------------------------------------

  /** Another runtime's events, read from the store: for followers and run waiters here (observers see only this runtime's own). */
  private publishRemote(events: readonly ProtocolEvent[]): void {
    try {
      this.hub.publish(events);
    } finally {
      this.runWaiters.notify(events);
    }
  }

  private publish(events: readonly ProtocolEvent[]): void {
    try {
      this.hub.publish(events);
      for (const observer of this.observers) for (const event of events) observer(event);
    } finally {
      this.runWaiters.notify(events);
      this.runChanges.published(events);
      this.inputs.published(events);
    }
  }

  private entryOrThrow(sessionId: string): SessionEntry {
    const entry = this.entries.get(sessionId);
    if (!entry) throw sessionNotFound();
    return entry;
  }

  async getSession(sessionId: string): Promise<SessionSnapshot> {
    return this.reads.getSession(sessionIdArgument(sessionId));
  }

  /** Newest first; pages with limit and before; of one state with state. Bad options: invalid_command. */
  async listSessions(options: ListSessionsOptions = {}): Promise<SessionSnapshot[]> {
    return this.reads.listSessions(listingOptions(options));
  }

  countSessionsByState(): Promise<SessionCounts> {
    return this.reads.countSessionsByState();
  }

  async getRun(runId: string): Promise<RunSnapshot> {
    const run = await this.store.getRun(runId);
    if (!run)
      throw new AgentError({
        code: 'run_not_found',
        message: 'No run has that id. Use the runId from the submit_turn receipt.',
      });
    return run;
  }

  async waitForRun(runId: string, options: { signal?: AbortSignal } = {}): Promise<RunSnapshot> {
    // A queued input's run (its receipt's runId) exists once the input starts.
    const started = this.inputs.whenStarted(runId);
    if (started)
      await (options.signal
        ? Promise.race([started, abortion(options.signal).then(() => options.signal?.throwIfAborted())])
        : started);
    return this.runWaiters.wait(runId, options.signal);
  }

  subscribe(sessionId: string, options: SubscribeOptions = {}): AsyncIterable<ProtocolEvent> {
    return this.reads.subscribe(sessionId, options);
  }

  /** Bad arguments are refused at the call (invalid_command); without afterSeq it starts at the first event. */
  follow(sessionId: string, options: FollowOptions): () => void {
    return this.reads.follow(sessionIdArgument(sessionId), {
      ...options,
      afterSeq: checkSubscriptionStart(options.afterSeq),
    });
  }

  async readEvents(sessionId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<ProtocolEvent[]> {
    return this.reads.readEvents(sessionIdArgument(sessionId), eventPageOptions(options));
  }

  observe(listener: (event: ProtocolEvent) => void): () => void {
    this.observers.add(listener);
    return () => this.observers.delete(listener);
  }

  /** The agent's model list, from the named provider (the default one when none is named). */
  async listModels(providerName?: string): Promise<ModelList> {
    // Reading the list starts an agent: none is started once shutting down began.
    if (this.stopped) throw runtimeStopped();
    const name = providerName ?? this.commands.defaultProvider;
    const provider = this.providerMap.get(name);
    if (!provider) throw unknownProvider(name, this.providerNames);
    if (!provider.doListModels || !provider.capabilities.modelList) {
      throw unsupported(provider, 'list its models; type the model name instead', 'model_list');
    }
    try {
      return await provider.doListModels();
    } catch (error) {
      // The read was ended by the shutdown (its agent stopped with the others): say that, not why an agent failed.
      if (this.stopped) throw runtimeStopped();
      throw error;
    }
  }

  /** The session's work against the commit its workspace started from, through its workspace's acquirer. */
  async getSessionDiff(sessionId: string, options: { readonly maxBytes?: number } = {}): Promise<SessionDiff> {
    const maxBytes = diffMaxBytes(options.maxBytes);
    return this.withSession(sessionId, async () => {
      const record = this.entryOrThrow(sessionId).record;
      const status = record.workspaceStatus;
      const acquirer = status === null ? undefined : this.workspaces.of(status.kind);
      if (!status || !acquirer?.diff) throw workspaceDiffUnsupported(record.workspace.kind);
      // Removed at close because it held no work: there is nothing to compare, and nothing left to ask.
      if (status.state === 'removed') return noWork(sessionId, status);
      return acquirer.diff(status, { sessionId, maxBytes });
    });
  }

  /** A blob (an image a turn carried) that the session's log refers to. */
  async readBlob(sessionId: string, sha256: string): Promise<StoredBlob> {
    const blob = /^[0-9a-f]{64}$/.test(sha256) ? await this.store.readBlob(sessionId, sha256) : undefined;
    if (!blob) {
      throw new AgentError({
        code: 'blob_not_found',
        message:
          'This session has no blob with that hash. Use a sha256 from an image part of one of its run.started events.',
      });
    }
    return blob;
  }

  async deleteSession(sessionId: string, options: DeleteSessionOptions = {}): Promise<DeletedSession> {
    return this.withSession(sessionId, async () => {
      await this.storeFailures.ensureConsistent(sessionId);
      const entry = this.entryOrThrow(sessionId);
      return entry.changeLifecycle(async () => {
        // A delete or a reopen just before this one decided what the session is now.
        if (entry.removed) throw sessionNotFound();
        if (entry.record.state !== 'closed') {
          throw new AgentError({
            code: 'session_open',
            message: 'The session is still open. Close it (close_session) before deleting it.',
          });
        }
        await entry.teardown.catch(() => undefined);
        await this.runChanges.settled(sessionId);
        // Sessions sharing one workspace (a fork and its source) are deleted one at a time: each asks
        // whether another still holds it, and two at once would each leave it to the other.
        const workspaceStatus = await this.deletesByDirectory(
          entry.record.workspaceStatus?.directory ?? sessionId,
          async () => {
            const released = await releaseForDelete(
              this.workspaceParts(),
              entry,
              options.discardWorkspaceChanges === true,
            );
            await this.writer.flush();
            await this.store.deleteSession(sessionId);
            this.entries.remove(entry);
            return released;
          },
        );
        this.writer.forget(sessionId);
        this.reads.endReadersOf(sessionId);
        return { sessionId, workspaceStatus };
      });
    });
  }

  async probeProviders(options: { timeoutMs?: number } = {}) {
    const results = await Promise.all(
      this.providers.map(async (provider) => [provider.name, await provider.doProbe(options)] as const),
    );
    return Object.fromEntries(results);
  }

  activeRuns(): Array<{ sessionId: string; runId: string }> {
    return this.entries
      .entries()
      .flatMap((entry) =>
        entry.record.activeRunId === null
          ? []
          : [{ sessionId: entry.record.sessionId, runId: entry.record.activeRunId }],
      );
  }

  beginShutdown(): void {
    this.inputs.holdQueued();
    // Once: shutdown() calls it again, and a second signal calls shutdown() again.
    if (this.shutdownBegun) return;
    this.shutdownBegun = true;
    // A turn still waiting for a process slot has not begun: started in the grace, it would spawn an
    // agent and send the prompt to the model only to be stopped when the grace ends.
    for (const entry of this.entries.entries()) {
      const runId = entry.runWaitingForProcess;
      if (runId !== null && runId === entry.record.activeRunId) this.stopForShutdown(entry.record.sessionId, runId);
    }
  }

  shutdown(options: ShutdownOptions = {}): Promise<void> {
    // Nothing queued starts from here, even a run the grace lets end on its own.
    this.beginShutdown();
    // A later call may only hurry a shutdown along (a second signal): less grace, a forced stop.
    if (options.force) {
      this.forceStop = true;
      this.storeBound.force();
      // A forced stop does not wait for a workspace being made (git and its hooks): it stops, taking back what it made.
      this.workspaces.stopAll();
    }
    if (this.stopped) {
      if (options.graceMs !== undefined) this.shutdownGrace?.shorten(options.graceMs);
      return this.stopped;
    }
    const grace = new ShutdownGrace(options.graceMs ?? 0);
    this.shutdownGrace = grace;
    // So does a bounded one, once its grace is over.
    if (options.graceMs !== undefined)
      grace.signal.addEventListener('abort', () => this.workspaces.stopAll(), { once: true });
    this.stopped = (async () => {
      // No session is taken over from now on; what this runtime holds goes back with the store's close.
      this.sharing?.remote.stop();
      await this.storeBound.wait(this.sharing?.sweep?.stop() ?? Promise.resolve());
      const commandsDone = Promise.allSettled([...this.inflight.values()].map((command) => command.promise));
      // A bounded shutdown does not wait past its grace for a command stuck on a wedged agent.
      const bounded = options.graceMs !== undefined || options.force === true;
      await (bounded ? Promise.race([commandsDone, abortion(grace.signal)]) : commandsDone);
      // A session whose output was dropped gets one last chance to end its run in the store (a
      // runtime started later ends what is left as runtime_restarted).
      const repairs = this.storeFailures.close();
      await (bounded ? Promise.race([repairs, abortion(grace.signal)]) : repairs);
      await this.settleActiveRuns(grace);
      grace.finish();
      // The grace is over: what the store still refuses (a unit failing now included) is given up after
      // that attempt, and a runtime started later ends those runs; within the grace, writes were retried as ever.
      this.writer.makeLastAttempts();
      const at = now();
      for (const entry of this.entries.entries()) {
        entry.clearAllTimers();
        const runId = entry.record.activeRunId;
        if (runId === null) continue;
        const completion: EventBody = {
          type: 'run.completed',
          runId,
          outcome: 'interrupted',
          error: shutdownEndOf(entry, runId),
        };
        this.log.stage(entry, withRunEndCancellations(entry, [completion], 'runtime_stopped'), at);
      }
      await this.storeBound.wait(this.writer.flush());
      await Promise.allSettled(
        this.entries.entries().map((entry) => this.stopProcess(entry, 'release', { force: this.forceStop })),
      );
      await Promise.allSettled(this.providers.map((provider) => provider.doDispose?.({ force: this.forceStop })));
      await this.runChanges.settled();
      await this.storeBound.wait(this.writer.flush());
      // Every event is published by now: an in-process subscriber's iteration ends after the last one.
      this.reads.endAllReaders();
      this.sharing?.stopLost();
      try {
        await this.storeBound.wait(this.store.close());
      } finally {
        this.storeBound.finish();
      }
    })();
    return this.stopped;
  }

  /** Asks every active run to stop, as interrupt_run would, and waits (within the grace) for them to end. */
  private async settleActiveRuns(grace: ShutdownGrace): Promise<void> {
    if (grace.signal.aborted) return;
    const active = this.activeRuns();
    await Promise.allSettled(
      active.map(({ sessionId, runId }) => {
        this.stopForShutdown(sessionId, runId);
        return this.runWaiters.wait(runId, grace.signal);
      }),
    );
  }

  /** Asks the run to stop, as interrupt_run would; its end says the shutdown stopped it (runtime_stopped). */
  private stopForShutdown(sessionId: string, runId: string): void {
    this.entries.get(sessionId)?.stoppedByShutdown.add(runId);
    const command = parseCommand({ type: 'interrupt_run', commandId: newCommandId(), sessionId });
    // Commands are refused once stopping began: this one goes straight to its handler.
    this.withSession(sessionId, () => runCommand(this.commands, command, lazyFingerprint(command))).catch(
      () => undefined,
    );
  }
}

/** Settles (never rejects) when the signal aborts. */
function abortion(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );
}

/** The largest diff getSessionDiff returns whole, unless asked for less (or more, up to the cap). */
const defaultDiffMaxBytes = diffLimits.defaultBytes;
const diffMaxBytesCap = diffLimits.maxBytes;

function diffMaxBytes(requested: number | undefined): number {
  if (requested === undefined) return defaultDiffMaxBytes;
  if (Number.isInteger(requested) && requested >= 1 && requested <= diffMaxBytesCap) return requested;
  throw new AgentError({
    code: 'invalid_command',
    message: `maxBytes must be a whole number from 1 to ${diffMaxBytesCap}. Leave it out for ${defaultDiffMaxBytes}.`,
    details: { reason: 'invalid_max_bytes' },
  });
}

function noWork(sessionId: string, status: WorkspaceStatus): SessionDiff {
  const baseCommit = status.worktree?.baseCommit ?? '';
  return { sessionId, baseCommit, branch: status.worktree?.branch ?? null, files: [], diff: '', truncated: false };
}

function workspaceDiffUnsupported(kind: string): AgentError {
  return new AgentError({
    code: 'capability_unsupported',
    message: `A ${kind} workspace has no diff: Tether did not make it, so it knows no base to compare with. Open the session in a git worktree (kind git_worktree) to review its work as a diff.`,
    details: { reason: 'workspace_diff' },
  });
}

/** The session a command works on (none for opening a new one). */
function sessionIdOf(command: Command): string | undefined {
  return command.type === 'open_session' ? command.continueSession : command.sessionId;
}

/** Creates a runtime over the given providers and store, and recovers what a previous process left. */
export async function createAgentRuntime(options: AgentRuntimeOptions): Promise<AgentRuntime> {
  const store = options.store ?? createInMemoryStore();
  const runtime = new Runtime(options, store);
  // Before the load: what recovery stores there (the runs a crash left, ended) is published as it is stored.
  if (options.observer) runtime.observe(options.observer);
  await runtime.load();
  return runtime;
}

/** What a run still active when a shutdown's grace is over ends with: whether its agent ever got it. */
function shutdownEndOf(entry: SessionEntry, runId: string): SerializedAgentError {
  if (entry.runWaitingForProcess === runId) return runNotStartedByShutdown;
  if (entry.isHandingOver(runId)) return runNotHandedOverByShutdown;
  return runCutOffByShutdown;
}
