import {
  AgentError,
  type CloseSessionCommand,
  type Command,
  type EventBody,
  type InterruptRunCommand,
  type OpenSessionCommand,
  type ProtocolEvent,
  type Receipt,
  type RunSnapshot,
  type SerializedAgentError,
  type SessionSnapshot,
  type SubmitTurnCommand,
  describeConfiguration,
  newCommandId,
  newRunId,
  parseCommand,
  toAgentError,
} from '@tether/protocol';
import type { AgentProviderV1, AgentProviderV1Part } from '@tether/provider-spec';
import { EventWriter, type StagedEvent } from '../log/event-writer.js';
import { SubscriptionHub, subscribeWithReplay } from '../log/subscription-hub.js';
import {
  decideClose,
  decideInterrupt,
  decideReopen,
  decideSubmitTurn,
  acceptsProviderPart,
  evolveRun,
  evolveSession,
  type Decision,
} from '../state/session-machine.js';
import { createInMemoryStore } from '../store/in-memory-store.js';
import type { RunRecord, StoredReceipt, TetherStore } from '../store/tether-store.js';
import { fingerprintCommand } from './command-fingerprint.js';
import type { AgentRuntime, AgentRuntimeOptions, CommandInput, SubscribeOptions } from './runtime-types.js';
import { SessionEntry, createSessionRecord, toSessionSnapshot } from './session-entry.js';
import { checkWorkspace } from './workspace-check.js';

function now(): string {
  return new Date().toISOString();
}

function runtimeStopped(): AgentError {
  return new AgentError({ code: 'runtime_stopped', message: 'This runtime has shut down. Create a new runtime to continue.' });
}

function commandIdReused(): AgentError {
  return new AgentError({
    code: 'invalid_command',
    message: 'That commandId was already used for a different command. Use a fresh commandId for each new command.',
    details: { reason: 'command_id_reused' },
  });
}

class Runtime implements AgentRuntime {
  readonly providerNames: readonly string[];
  private readonly store: TetherStore;
  private readonly providers: Map<string, AgentProviderV1>;
  private readonly defaultProvider: string;
  private readonly hub = new SubscriptionHub();
  private readonly writer: EventWriter;
  private readonly entries = new Map<string, SessionEntry>();
  private readonly runWaiters = new Map<string, Set<(run: RunSnapshot) => void>>();
  private readonly inflight = new Map<string, { fingerprint: string; promise: Promise<Receipt> }>();
  private readonly onBackgroundError: (error: AgentError) => void;
  private stopped: Promise<void> | null = null;

  constructor(options: AgentRuntimeOptions, store: TetherStore) {
    this.store = store;
    this.providers = new Map(options.providers.map((provider) => [provider.name, provider]));
    this.providerNames = [...this.providers.keys()];
    const fallback = options.defaultProvider ?? this.providerNames[0];
    if (fallback === undefined || !this.providers.has(fallback)) {
      throw new AgentError({ code: 'provider_unavailable', message: 'createAgentRuntime needs at least one provider (e.g. createClaudeProvider()).' });
    }
    this.defaultProvider = fallback;
    this.onBackgroundError = options.onBackgroundError ?? (() => {});
    this.writer = new EventWriter({
      store,
      onCommitted: (events) => this.publish(events),
      onBackgroundError: (error) => this.onBackgroundError(error),
    });
  }

  /** Loads sessions and completes runs a previous process left running. */
  async load(): Promise<void> {
    const records = await this.store.loadSessions();
    const at = now();
    for (const record of records) {
      this.writer.restoreLastSeq(record.sessionId, record.lastSeq);
      const provider = this.providers.get(record.provider);
      const entry = new SessionEntry(record, provider ?? null);
      this.entries.set(record.sessionId, entry);
      if (record.activeRunId === null) continue;
      entry.activeRun = (await this.store.getRun(record.activeRunId)) ?? null;
      this.stageEvents(entry, [
        {
          type: 'run.completed',
          runId: record.activeRunId,
          outcome: 'failed',
          error: {
            code: 'runtime_restarted',
            message: 'The runtime stopped while this run was active; its result is unknown. Submit the turn again if it is still needed.',
            retryable: true,
          },
        },
      ], at);
    }
    await this.writer.flush();
  }

  // ---- commands -------------------------------------------------------------------------

  dispatch(raw: unknown): Promise<never> {
    return this.execute(raw) as Promise<never>;
  }

  openSession(input: CommandInput<OpenSessionCommand>) {
    return this.dispatch({ ...input, type: 'open_session', commandId: input.commandId ?? newCommandId() });
  }

  submitTurn(input: CommandInput<SubmitTurnCommand>) {
    return this.dispatch({ ...input, type: 'submit_turn', commandId: input.commandId ?? newCommandId() });
  }

  interruptRun(input: CommandInput<InterruptRunCommand>) {
    return this.dispatch({ ...input, type: 'interrupt_run', commandId: input.commandId ?? newCommandId() });
  }

  closeSession(input: CommandInput<CloseSessionCommand>) {
    return this.dispatch({ ...input, type: 'close_session', commandId: input.commandId ?? newCommandId() });
  }

  private async execute(raw: unknown): Promise<Receipt> {
    if (this.stopped) throw runtimeStopped();
    const command = parseCommand(raw);
    const fingerprint = fingerprintCommand(command);
    const running = this.inflight.get(command.commandId);
    if (running) {
      if (running.fingerprint !== fingerprint) throw commandIdReused();
      return running.promise;
    }
    const promise = (async () => {
      const stored = await this.store.findReceipt(command.commandId);
      if (stored) {
        if (stored.fingerprint !== fingerprint) throw commandIdReused();
        return stored.receipt;
      }
      if (this.stopped) throw runtimeStopped();
      return this.handle(command, fingerprint);
    })();
    this.inflight.set(command.commandId, { fingerprint, promise });
    try {
      return await promise;
    } finally {
      this.inflight.delete(command.commandId);
    }
  }

  private handle(command: Command, fingerprint: string): Promise<Receipt> {
    switch (command.type) {
      case 'open_session':
        return command.continueSession === undefined ? this.openNew(command, fingerprint) : this.reopen(command, fingerprint);
      case 'submit_turn':
        return this.submit(command, fingerprint);
      case 'interrupt_run':
        return this.interrupt(command, fingerprint);
      case 'close_session':
        return this.close(command, fingerprint);
    }
  }

  private async openNew(command: OpenSessionCommand, fingerprint: string): Promise<Receipt> {
    const providerName = command.provider ?? this.defaultProvider;
    const provider = this.providers.get(providerName);
    if (!provider) {
      throw new AgentError({
        code: 'invalid_command',
        message: `No provider named "${providerName}" is configured. Available: ${this.providerNames.join(', ')}.`,
        details: { reason: 'unknown_provider' },
      });
    }
    const workspace = await checkWorkspace(command.workspace!);
    const at = now();
    const record = createSessionRecord(command, { provider: providerName, workspace, at });
    const entry = new SessionEntry(record, provider);
    // Validates the configuration and finds the agent before anything is recorded; spawns nothing.
    await entry.attachProvider((part) => this.onProviderPart(entry, part));
    const receipt: Receipt = { type: 'open_session', commandId: command.commandId, sessionId: record.sessionId };
    const body: EventBody = {
      type: 'session.opened',
      provider: providerName,
      workspace,
      configuration: describeConfiguration(record.configuration),
      ephemeral: record.ephemeral,
      reopened: false,
    };
    this.entries.set(record.sessionId, entry);
    try {
      await this.commitDecision(entry, { events: [body] }, receipt, fingerprint, at);
    } catch (error) {
      this.entries.delete(record.sessionId);
      await entry.stopProvider('close');
      throw error;
    }
    return receipt;
  }

  private async reopen(command: OpenSessionCommand, fingerprint: string): Promise<Receipt> {
    const sessionId = command.continueSession!;
    const entry = this.entries.get(sessionId);
    const decision = decideReopen(entry?.record, command);
    const receipt: Receipt = { type: 'open_session', commandId: command.commandId, sessionId };
    await entry!.teardown;
    await this.commitDecision(entry!, decision, receipt, fingerprint, now());
    return receipt;
  }

  private async submit(command: SubmitTurnCommand, fingerprint: string): Promise<Receipt> {
    const entry = this.entries.get(command.sessionId);
    const decision = decideSubmitTurn(entry?.record, command, { newRunId });
    const runId = decision.runId!;
    const receipt: Receipt = { type: 'submit_turn', commandId: command.commandId, sessionId: command.sessionId, runId };
    await this.commitDecision(entry!, decision, receipt, fingerprint, now());
    const input = command.input.map((part) => ({ type: 'text' as const, text: String(part.text) }));
    void this.startTurn(entry!, runId, input);
    return receipt;
  }

  private async startTurn(entry: SessionEntry, runId: string, input: { type: 'text'; text: string }[]): Promise<void> {
    try {
      const session = await entry.ensureProvider((part) => this.onProviderPart(entry, part));
      await session.doTurn({ runId, input });
    } catch (error) {
      this.completeRun(entry, runId, 'failed', toAgentError(error).toObject());
    }
  }

  private async interrupt(command: InterruptRunCommand, fingerprint: string): Promise<Receipt> {
    const entry = this.entries.get(command.sessionId);
    const decision = decideInterrupt(entry?.record, command);
    if (entry?.provider && !entry.provider.capabilities.interrupt) {
      throw new AgentError({
        code: 'capability_unsupported',
        message: `The ${entry.provider.name} provider cannot interrupt a run yet. Wait for the run to complete, or close the session to stop it.`,
        details: { reason: 'interrupt' },
      });
    }
    const receipt: Receipt = { type: 'interrupt_run', commandId: command.commandId, sessionId: command.sessionId, runId: decision.runId ?? null };
    await this.commitDecision(entry!, decision, receipt, fingerprint, now());
    return receipt;
  }

  private async close(command: CloseSessionCommand, fingerprint: string): Promise<Receipt> {
    const entry = this.entries.get(command.sessionId);
    const decision = decideClose(entry?.record, command);
    const receipt: Receipt = { type: 'close_session', commandId: command.commandId, sessionId: command.sessionId };
    await this.commitDecision(entry!, decision, receipt, fingerprint, now());
    await entry!.stopProvider('close');
    return receipt;
  }

  /** Applies a decision to memory and writes it with its receipt in one transaction. */
  private async commitDecision(entry: SessionEntry, decision: Decision, receipt: Receipt, fingerprint: string, at: string): Promise<void> {
    const before = { record: entry.record, activeRun: entry.activeRun };
    const runs = this.applyEvents(entry, decision.events, at);
    const stored: StoredReceipt = { commandId: receipt.commandId, fingerprint, receipt, at };
    const staged: StagedEvent[] = decision.events.map((body) => ({ sessionId: entry.record.sessionId, body, at }));
    try {
      await this.writer.commit(staged, [entry.record], runs, [stored]);
    } catch (error) {
      entry.record = before.record;
      entry.activeRun = before.activeRun;
      throw error;
    }
  }

  // ---- provider output ------------------------------------------------------------------

  private onProviderPart(entry: SessionEntry, part: AgentProviderV1Part): void {
    if (!acceptsProviderPart(entry.record, part)) {
      // Output for a run that already ended (e.g. after close) is expected; note it once.
      this.noteOnce(entry, 'runtime.part_for_inactive_run');
      return;
    }
    if (part.type === 'session.provider_session_changed' && part.providerSessionId === entry.record.providerSessionId) return;
    this.stageEvents(entry, [part], now());
  }

  private noteOnce(entry: SessionEntry, code: string): void {
    if (entry.notedDiagnostics.has(code)) return;
    entry.notedDiagnostics.add(code);
    this.stageEvents(entry, [{ type: 'diagnostic', level: 'debug', code }], now());
  }

  private completeRun(entry: SessionEntry, runId: string, outcome: 'failed' | 'interrupted', error: SerializedAgentError): void {
    if (entry.record.activeRunId !== runId) return;
    this.stageEvents(entry, [{ type: 'run.completed', runId, outcome, error }], now());
  }

  private stageEvents(entry: SessionEntry, bodies: EventBody[], at: string): void {
    const runs = this.applyEvents(entry, bodies, at);
    this.writer.stage(
      bodies.map((body) => ({ sessionId: entry.record.sessionId, body, at })),
      [entry.record],
      runs,
    );
  }

  /** Evolves the session and its active run in memory; returns the run records that changed. */
  private applyEvents(entry: SessionEntry, bodies: readonly EventBody[], at: string): RunRecord[] {
    const changed: RunRecord[] = [];
    for (const body of bodies) {
      if ('runId' in body && body.runId !== undefined && body.type !== 'diagnostic') {
        const current = entry.activeRun?.runId === body.runId ? entry.activeRun : undefined;
        const next = evolveRun(current, entry.record.sessionId, body, at);
        if (next && next !== current) {
          entry.activeRun = next.status === 'running' ? next : null;
          changed.push(next);
        }
      }
      entry.record = evolveSession(entry.record, body, at);
    }
    return changed;
  }

  private publish(events: readonly ProtocolEvent[]): void {
    try {
      this.hub.publish(events);
    } finally {
      for (const event of events) {
        if (event.type !== 'run.completed') continue;
        const waiters = this.runWaiters.get(event.runId);
        if (!waiters) continue;
        this.runWaiters.delete(event.runId);
        void this.store.getRun(event.runId).then((run) => {
          if (run) for (const resolve of waiters) resolve(run);
        });
      }
    }
  }

  // ---- reads ----------------------------------------------------------------------------

  private entryOrThrow(sessionId: string): SessionEntry {
    const entry = this.entries.get(sessionId);
    if (!entry) throw new AgentError({ code: 'session_not_found', message: 'No session has that id. Check the id, or open a new session with open_session.' });
    return entry;
  }

  async getSession(sessionId: string): Promise<SessionSnapshot> {
    const entry = this.entryOrThrow(sessionId);
    return toSessionSnapshot(entry.record, this.writer.lastSeqOf(sessionId));
  }

  async listSessions(): Promise<SessionSnapshot[]> {
    return [...this.entries.values()]
      .map((entry) => toSessionSnapshot(entry.record, this.writer.lastSeqOf(entry.record.sessionId)))
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : -1));
  }

  async getRun(runId: string): Promise<RunSnapshot> {
    const run = await this.store.getRun(runId);
    if (!run) throw new AgentError({ code: 'run_not_found', message: 'No run has that id. Use the runId from the submit_turn receipt.' });
    return run;
  }

  async waitForRun(runId: string, options: { signal?: AbortSignal } = {}): Promise<RunSnapshot> {
    const waiting = new Promise<RunSnapshot>((resolve, reject) => {
      const waiters = this.runWaiters.get(runId) ?? new Set();
      const settle = (run: RunSnapshot) => {
        options.signal?.removeEventListener('abort', onAbort);
        resolve(run);
      };
      const onAbort = () => {
        waiters.delete(settle);
        reject(options.signal?.reason ?? new Error('aborted'));
      };
      waiters.add(settle);
      this.runWaiters.set(runId, waiters);
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
    // Registered first, then checked: a completion between the two cannot be missed.
    const run = await this.getRun(runId);
    if (run.status === 'completed') return run;
    return waiting;
  }

  subscribe(sessionId: string, options: SubscribeOptions = {}): AsyncIterable<ProtocolEvent> {
    this.entryOrThrow(sessionId);
    return subscribeWithReplay(this.hub, this.store, sessionId, { afterSeq: options.afterSeq ?? 0, signal: options.signal });
  }

  async readEvents(sessionId: string, options: { afterSeq?: number; limit?: number } = {}): Promise<ProtocolEvent[]> {
    this.entryOrThrow(sessionId);
    return this.store.readEvents(sessionId, { afterSeq: options.afterSeq ?? 0, limit: Math.min(options.limit ?? 1000, 10_000) });
  }

  async probeProviders(options: { timeoutMs?: number } = {}) {
    const results = await Promise.all([...this.providers.values()].map(async (provider) => [provider.name, await provider.doProbe(options)] as const));
    return Object.fromEntries(results);
  }

  shutdown(): Promise<void> {
    this.stopped ??= (async () => {
      await Promise.allSettled([...this.inflight.values()].map((command) => command.promise));
      const at = now();
      for (const entry of this.entries.values()) {
        const runId = entry.record.activeRunId;
        if (runId === null) continue;
        this.stageEvents(entry, [{
          type: 'run.completed',
          runId,
          outcome: 'interrupted',
          error: { code: 'runtime_stopped', message: 'The runtime shut down while this run was active.', retryable: true },
        }], at);
      }
      await this.writer.flush();
      await Promise.allSettled([...this.entries.values()].map((entry) => entry.stopProvider('release')));
      await this.writer.flush();
      await this.store.close();
    })();
    return this.stopped;
  }
}

/** Creates a runtime over the given providers and store, and recovers what a previous process left. */
export async function createAgentRuntime(options: AgentRuntimeOptions): Promise<AgentRuntime> {
  const store = options.store ?? createInMemoryStore();
  const runtime = new Runtime(options, store);
  await runtime.load();
  return runtime;
}
