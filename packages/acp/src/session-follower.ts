import type { SessionUpdate } from '@agentclientprotocol/sdk';
import {
  AgentError,
  type EventOfType,
  type InteractionRequest,
  type ProtocolEvent,
  toAgentError,
  turnTitle,
} from '@tether/protocol';
import type { AcpHost } from './acp-host.js';
import { updatesForEvent } from './session-updates.js';

/** How a run a prompt waits for ends: it completed, or, queued behind another run, it was cancelled before it started. */
export type RunEnd = EventOfType<'run.completed'> | EventOfType<'input.cancelled'>;

/** An interaction the client is asked about: aborted when it is settled elsewhere or the follower stops. */
export interface OpenInteraction {
  readonly interactionRef: string;
  readonly request: InteractionRequest;
  readonly signal: AbortSignal;
}

export interface SessionFollowerOptions {
  readonly host: AcpHost;
  readonly sessionId: string;
  /** The session's directory (recorded file parts are relative to it). */
  readonly directory: string;
  /** Follow events after this seq (0 replays the whole log). */
  readonly afterSeq: number;
  /**
   * Events up to this seq are already in what the client was answered with (a new session's snapshot):
   * they are read only for the agent's start (onAgentStarted), and nothing of them is sent.
   */
  readonly knownUntil?: number;
  /** Whether the session already has a title (a first turn gives it one, announced once). */
  readonly titled: boolean;
  /** Interactions open when following started without a replay (session/resume). */
  readonly pendingAtStart: readonly { interactionRef: string; request: InteractionRequest }[];
  notify(update: SessionUpdate): Promise<void>;
  /** The session's settings changed (its mode or model): the client's config options are out of date. */
  onSettingsChanged(): void;
  /** The session closed (here or through another host). */
  onClosed(): void;
  /** The session's agent started, or failed to start (live events only): a model list can be asked of it now. */
  onAgentStarted(): void;
  /** Ask the client; called for live interactions only (a replayed one that is still open, once caught up). */
  ask(interaction: OpenInteraction): void;
  onError(error: AgentError): void;
}

/** Runs completed recently, kept for a prompt whose run ended before its receipt came back. */
const completedRunsKept = 20;

/**
 * Follows one session's events for one connection, in order: turns them into session/update
 * notifications (each awaited, so a prompt's answer never overtakes its output), hands open
 * interactions to the client, and tells the prompts waiting on a run when it ends.
 */
export class SessionFollower {
  readonly #options: SessionFollowerOptions;
  readonly #abort = new AbortController();
  readonly #completed = new Map<string, RunEnd>();
  /** Everyone waiting for a run's end: its prompt, and a control queued behind it. */
  readonly #runWaiters = new Map<string, { resolve(event: RunEnd): void; reject(error: AgentError): void }[]>();
  readonly #seqWaiters: { seq: number; resolve(): void; reject(error: AgentError): void }[] = [];
  readonly #open = new Map<string, { request: InteractionRequest; asking: AbortController | null }>();
  readonly #ownRuns = new Set<string>();
  /** Inputs queued as a next run (after_turn) and not yet started or cancelled: the run each will start as. */
  readonly #queuedRuns = new Map<string, string>();
  /** The run the agent began by itself (startedBy: agent) while it is active: the client's Stop ends it too. */
  #agentRun: string | null = null;
  /** Runs that streamed answer text, for as long as they run. */
  readonly #answeredRuns = new Set<string>();
  /** The tool calls each run left open so far (shown, neither completed nor failed yet). */
  readonly #openToolCalls = new Map<string, Set<string>>();
  #announcedMode: string | undefined;
  #expectingOwnRun = false;
  #titled: boolean;
  #lastSeq: number;
  #replayUntil = 0;
  #failure: AgentError | null = null;
  readonly done: Promise<void>;

  constructor(options: SessionFollowerOptions, replayUntil = 0) {
    this.#options = options;
    this.#titled = options.titled;
    this.#lastSeq = options.afterSeq;
    this.#replayUntil = replayUntil;
    for (const pending of options.pendingAtStart)
      this.#open.set(pending.interactionRef, { request: pending.request, asking: null });
    this.done = this.#run();
  }

  /** Why following stopped (the host failed, or the session or connection closed); null while it follows. */
  get failure(): AgentError | null {
    return this.#failure;
  }

  /** The next run to start is this connection's own prompt (its input is not echoed back to the client). */
  expectOwnRun(expecting: boolean): void {
    this.#expectingOwnRun = expecting;
  }

  markOwnRun(runId: string): void {
    this.#ownRuns.add(runId);
  }

  /** Takes over what the follower this one replaces (a session/load again) knew of this connection's prompts. */
  continueFrom(previous: SessionFollower): void {
    for (const runId of previous.#ownRuns) this.#ownRuns.add(runId);
    this.#expectingOwnRun = previous.#expectingOwnRun;
  }

  /**
   * Resolves with the run's run.completed, whether it already passed or is still to come; for a run
   * a queued input was to start as, with its input.cancelled if it never started.
   */
  waitForRun(runId: string): Promise<RunEnd> {
    const completed = this.#completed.get(runId);
    if (completed) return Promise.resolve(completed);
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      const waiting = this.#runWaiters.get(runId);
      if (waiting) waiting.push({ resolve, reject });
      else this.#runWaiters.set(runId, [{ resolve, reject }]);
    });
  }

  /** The turn the agent began by itself that is running now (no prompt's), or null. */
  get agentRun(): string | null {
    return this.#agentRun;
  }

  /** Resolves once every event up to `seq` has been handled (its notifications sent). */
  reached(seq: number): Promise<void> {
    if (this.#lastSeq >= seq) return Promise.resolve();
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => this.#seqWaiters.push({ seq, resolve, reject }));
  }

  /** Stops following; questions still being asked are withdrawn from the client. */
  stop(): void {
    this.#abort.abort();
  }

  async #run(): Promise<void> {
    const { host, sessionId } = this.#options;
    this.#askOpen();
    try {
      for await (const event of host.subscribe(sessionId, { afterSeq: this.#lastSeq, signal: this.#abort.signal })) {
        await this.#handle(event);
        if (this.#abort.signal.aborted) break;
      }
      this.#end(
        new AgentError({
          code: 'session_not_found',
          message: 'The session stopped being followed (the connection or the session closed).',
        }),
      );
    } catch (error) {
      const failure = toAgentError(error);
      if (!this.#abort.signal.aborted) this.#options.onError(failure);
      this.#end(failure);
    }
  }

  async #handle(event: ProtocolEvent): Promise<void> {
    if (event.seq <= (this.#options.knownUntil ?? 0)) {
      if (isAgentStart(event)) this.#options.onAgentStarted();
      this.#reached(event.seq);
      return;
    }
    const replaying = event.seq <= this.#replayUntil;
    // A turn the agent began by itself (a background task's report) is no prompt's run.
    if (event.type === 'run.started' && this.#expectingOwnRun && !replaying && event.startedBy !== 'agent') {
      this.#expectingOwnRun = false;
      this.#ownRuns.add(event.runId);
    }
    const own = 'runId' in event && event.runId !== undefined && this.#ownRuns.has(event.runId);
    if (event.type === 'run.message_delta') this.#answeredRuns.add(event.runId);
    const updates = updatesForEvent(event, {
      showInput: replaying || !own,
      directory: this.#options.directory,
      answeredRuns: this.#answeredRuns,
      announcedMode: this.#announcedMode,
    });
    updates.push(...this.#closeToolCalls(event));
    if (event.type === 'session.mode_changed') this.#announcedMode = event.mode;
    if (event.type === 'interaction.settled' && event.outcome === 'approved') {
      // The approved tool now runs: its call moves on from pending (the event names only the interaction).
      const request = this.#open.get(event.interactionRef)?.request;
      if (request?.kind === 'approval') {
        updates.push({ sessionUpdate: 'tool_call_update', toolCallId: request.toolUseId, status: 'in_progress' });
      }
    }
    if (event.type === 'run.started' && !this.#titled) {
      const title = turnTitle(event);
      if (title !== null) {
        this.#titled = true;
        updates.push({ sessionUpdate: 'session_info_update', title, updatedAt: event.at });
      }
    }
    for (const update of updates) await this.#options.notify(update);
    if (!replaying && (event.type === 'session.mode_changed' || event.type === 'session.model_changed')) {
      this.#options.onSettingsChanged();
    }
    if (!replaying && event.type === 'session.closed') this.#options.onClosed();
    if (!replaying && isAgentStart(event)) this.#options.onAgentStarted();
    this.#track(event, replaying);
    if (event.seq === this.#replayUntil) this.#askOpen();
    this.#reached(event.seq);
  }

  /** Every event up to `seq` is handled: its waiters go on. */
  #reached(seq: number): void {
    this.#lastSeq = seq;
    for (const waiter of this.#seqWaiters.filter((candidate) => candidate.seq <= seq)) {
      this.#seqWaiters.splice(this.#seqWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

  /**
   * A run that ends (its agent crashed, its host restarted, it was stopped) with tool calls still
   * open: each is closed as failed, live and on a replay alike, rather than left running in the client
   * for ever.
   */
  #closeToolCalls(event: ProtocolEvent): SessionUpdate[] {
    if (event.type === 'run.tool_activity' && event.toolName !== 'TodoWrite') {
      const open = this.#openToolCalls.get(event.runId) ?? new Set<string>();
      this.#openToolCalls.set(event.runId, open);
      if (event.status === 'invoked') open.add(event.toolUseId);
      else open.delete(event.toolUseId);
      return [];
    }
    if (event.type !== 'run.completed') return [];
    const open = this.#openToolCalls.get(event.runId);
    this.#openToolCalls.delete(event.runId);
    return [...(open ?? [])].map((toolCallId) => ({
      sessionUpdate: 'tool_call_update' as const,
      toolCallId,
      status: 'failed' as const,
    }));
  }

  #track(event: ProtocolEvent, replaying: boolean): void {
    switch (event.type) {
      case 'interaction.requested':
        this.#open.set(event.interactionRef, { request: event.request, asking: null });
        if (!replaying) this.#askOpen();
        return;
      case 'interaction.settled':
      case 'interaction.withdrawn':
      case 'interaction.cancelled':
      case 'interaction.send_failed':
        this.#open.get(event.interactionRef)?.asking?.abort();
        this.#open.delete(event.interactionRef);
        return;
      case 'input.queued':
        if (event.delivery === 'after_turn') this.#queuedRuns.set(event.inputId, event.runId);
        return;
      case 'input.started':
        this.#queuedRuns.delete(event.inputId);
        return;
      case 'input.cancelled':
        // A steer's run goes on; a queued input's run never starts, and whoever waits for it is told now.
        if (this.#queuedRuns.delete(event.inputId)) this.#runEnded(event.runId, event);
        return;
      case 'run.started':
        if (event.startedBy === 'agent') this.#agentRun = event.runId;
        return;
      case 'run.completed':
        if (this.#agentRun === event.runId) this.#agentRun = null;
        this.#answeredRuns.delete(event.runId);
        this.#runEnded(event.runId, event);
        return;
      default:
        return;
    }
  }

  #runEnded(runId: string, end: RunEnd): void {
    this.#completed.set(runId, end);
    if (this.#completed.size > completedRunsKept) this.#completed.delete(this.#completed.keys().next().value!);
    const waiters = this.#runWaiters.get(runId) ?? [];
    this.#runWaiters.delete(runId);
    for (const waiter of waiters) waiter.resolve(end);
  }

  /** Asks the client about every open interaction not being asked yet. */
  #askOpen(): void {
    for (const [interactionRef, open] of this.#open) {
      if (open.asking) continue;
      open.asking = new AbortController();
      const signal = AbortSignal.any([open.asking.signal, this.#abort.signal]);
      this.#options.ask({ interactionRef, request: open.request, signal });
    }
  }

  #end(failure: AgentError): void {
    this.#failure = failure;
    for (const open of this.#open.values()) open.asking?.abort();
    for (const waiters of this.#runWaiters.values()) for (const waiter of waiters) waiter.reject(failure);
    this.#runWaiters.clear();
    for (const waiter of this.#seqWaiters.splice(0)) waiter.reject(failure);
  }
}

/** The session's agent started, or its start ahead of a first prompt failed. */
function isAgentStart(event: ProtocolEvent): boolean {
  return (
    event.type === 'session.process_started' || (event.type === 'diagnostic' && event.code === 'agent.start_failed')
  );
}
