import {
  AgentError,
  type EventBody,
  type InputPart,
  type ProtocolEvent,
  type QueuedInput,
  type SerializedAgentError,
  toAgentError,
} from '@tether/protocol';
import type { AgentProviderV1InputPart, AgentProviderV1Part, AgentProviderV1Session } from '@tether/provider-spec';
import type { EventWriter } from '../log/event-writer.js';
import { budgetSpent, queuedAfterTurn, queuedInputCancellations } from '../state/session-machine.js';
import { closedPlanWindow } from './plan-limit-hold.js';
import type { SessionEntry } from './session-entry.js';
import type { SessionLog } from './session-log.js';
import {
  type FileReferences,
  checkFilesStillThere,
  turnForAgent,
  turnInputPlace,
} from './turn-input/resolve-turn-input.js';

/**
 * A queued after_turn input's content, held in memory until it starts: the log keeps it as the host
 * sent it (or not at all, redacted), the agent needs it as read (files resolved, images' bytes).
 */
export interface HeldInput {
  /** The run it will start as. */
  readonly runId: string;
  readonly recorded: readonly InputPart[] | null;
  readonly provider: readonly AgentProviderV1InputPart[];
  /** Its file references as resolved at submit: looked at again when it is about to start. */
  readonly files: FileReferences;
}

/** A follow-up's files were looked at again before it starts: what was found (undefined: all still there). */
interface FilesChecked {
  readonly inputId: string;
  readonly refusal: AgentError | undefined;
}

export interface InputQueueParts {
  readonly log: SessionLog;
  readonly writer: EventWriter;
  /** Starts a run's provider work in the background (as submit_turn does). */
  readonly startRun: (
    entry: SessionEntry,
    runId: string,
    work: (session: AgentProviderV1Session) => Promise<void>,
  ) => void;
  /** The runtime is shutting down: nothing queued starts (a restart cancels it, runtime_restarted). */
  readonly isStopped: () => boolean;
  /** The session if it is in memory now. */
  readonly resident: (sessionId: string) => SessionEntry | undefined;
}

/** setTimeout's longest delay (about 24.8 days): a later reset is waited for in more than one step. */
const longestTimerMs = 2_147_483_647;

/**
 * The follow-ups of the runtime's sessions: which inputs wait (the session record's queuedInputs,
 * kept by the events) and, for after_turn ones, their content (here, in memory only). When a
 * session's run ends, its steers the agent never settled are cancelled and its oldest after_turn
 * input starts as the next run, in the same tick, so no command sees the session idle in between;
 * unless the plan limit was last reported closed: then each waits, input.held, until the window's
 * reset or a report that reopens it (docs/protocol.md, "Follow-ups").
 */
export class InputQueue {
  private readonly parts: InputQueueParts;
  private readonly held = new Map<string, HeldInput>();
  /** A graceful stop began (holdQueued): no queued after_turn input starts any more. */
  private holding = false;
  /** Callers waiting for a queued input's run to exist (waitForRun on its receipt's runId), by run id. */
  private readonly startWaiters = new Map<string, Set<{ resolve: () => void; reject: (error: AgentError) => void }>>();
  /** Sessions whose follow-ups the plan limit holds: the timer that tries again at the window's reset. */
  private readonly reopenTimers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Sessions whose next follow-up's files are being looked at: it starts (or not) once that ends. */
  private readonly checkingFiles = new Set<string>();

  constructor(parts: InputQueueParts) {
    this.parts = parts;
  }

  /**
   * A graceful stop began: from now on no queued after_turn input starts, whatever ends the run it
   * waits for. Each stays queued (withdrawing or closing still ends it) until the runtime that
   * starts next over the store cancels it, runtime_restarted, as it does every follow-up left queued.
   * Steers still end with their run: they belong to it.
   */
  holdQueued(): void {
    this.holding = true;
    for (const timer of this.reopenTimers.values()) clearTimeout(timer);
    this.reopenTimers.clear();
  }

  /** Keeps an after_turn input's content until it starts or is cancelled (before its input.queued is written). */
  hold(inputId: string, input: HeldInput): void {
    this.held.set(inputId, input);
  }

  /** Its input.queued was not written, or it was cancelled: nothing to keep. */
  drop(inputId: string): void {
    const held = this.held.get(inputId);
    if (!held) return;
    this.held.delete(inputId);
    this.settleWaiters(held.runId, notStarted(held.runId));
  }

  /**
   * Resolves once the queued input that starts as `runId` has started and its run is stored;
   * rejects (run_not_found) if it is cancelled first. Undefined when no input here waits to start as it.
   */
  whenStarted(runId: string): Promise<void> | undefined {
    if (![...this.held.values()].some((held) => held.runId === runId)) return undefined;
    return new Promise((resolve, reject) => {
      const waiters = this.startWaiters.get(runId) ?? new Set();
      waiters.add({ resolve, reject });
      this.startWaiters.set(runId, waiters);
    });
  }

  private settleWaiters(runId: string, error?: AgentError): void {
    const waiters = this.startWaiters.get(runId);
    if (!waiters) return;
    this.startWaiters.delete(runId);
    for (const waiter of waiters) error ? waiter.reject(error) : waiter.resolve();
  }

  /**
   * A run of the session may have ended (its run.completed applied): its unsettled steers end, then
   * the next queued after_turn input starts (one that refers to files once they were looked at again:
   * a moment later). Does nothing while a run is active, and is safe to call more than once for one end.
   */
  continueAfterRun(entry: SessionEntry): void {
    this.advance(entry, undefined);
  }

  /**
   * continueAfterRun, with what a look at the next follow-up's files just found. That look takes a
   * moment (the disk), so it is taken first and the whole decision made again once it ends: the
   * input may have been withdrawn, the session closed or the runtime stopped meanwhile.
   */
  private advance(entry: SessionEntry, checked: FilesChecked | undefined): void {
    const { log, writer, isStopped } = this.parts;
    if (isStopped() || writer.failureOf(entry.record.sessionId)) return;
    const unsettled = (entry.record.queuedInputs ?? []).filter(
      (queued) => queued.delivery === 'steer' && queued.runId !== entry.record.activeRunId,
    );
    if (unsettled.length > 0)
      log.stage(
        entry,
        unsettled.map((queued) => steerEnding(entry, queued)),
      );
    // Draining: the queue is left as it stands, for the next runtime to cancel (one way for all of it).
    if (this.holding) return;
    // The look at the next follow-up's files ends with a call here: that call decides.
    if (this.checkingFiles.has(entry.record.sessionId)) return;
    for (;;) {
      const record = entry.record;
      if (record.state === 'closed' || record.activeRunId !== null) return;
      const next = queuedAfterTurn(record)[0];
      if (!next) return;
      const spent = budgetSpent(record);
      if (spent) {
        log.stage(entry, queuedInputCancellations(queuedAfterTurn(record), 'agent_refused', spent.toObject()));
        return;
      }
      const held = this.held.get(next.inputId);
      if (!held) {
        // Queued by a runtime that stopped (its recovery cancels those): the content is not here.
        log.stage(entry, queuedInputCancellations([next], 'runtime_restarted'));
        continue;
      }
      const closed = closedPlanWindow(record.limits, Date.now());
      if (closed) {
        this.holdForPlanLimit(entry, closed.until);
        return;
      }
      // A file it refers to may have gone (or changed) while it waited: it would reach the agent as an empty mention.
      if (held.files.references.length > 0) {
        if (checked?.inputId !== next.inputId) {
          this.checkFiles(entry, next.inputId, held);
          return;
        }
        if (checked.refusal) {
          log.stage(entry, queuedInputCancellations([next], 'input_invalid', notStartable(checked.refusal)));
          continue;
        }
      }
      this.start(entry, next, held);
      return;
    }
  }

  /** Looks at a follow-up's files as submit_turn did, then decides again (advance) with what was found. */
  private checkFiles(entry: SessionEntry, inputId: string, held: HeldInput): void {
    const sessionId = entry.record.sessionId;
    this.checkingFiles.add(sessionId);
    checkFilesStillThere(held.files, turnInputPlace(entry.record)).then(
      () => this.filesChecked(entry, { inputId, refusal: undefined }),
      (error: unknown) => this.filesChecked(entry, { inputId, refusal: toAgentError(error) }),
    );
  }

  private filesChecked(entry: SessionEntry, checked: FilesChecked): void {
    this.checkingFiles.delete(entry.record.sessionId);
    this.advance(entry, checked);
  }

  /**
   * The window is closed until `until`: every queued after_turn input not yet held until then is
   * (input.held), and the session is looked at again at that time. A withdraw or a close ends a held
   * input as any; a report that reopens the window sooner starts it sooner (published).
   */
  private holdForPlanLimit(entry: SessionEntry, until: string): void {
    const newlyHeld = queuedAfterTurn(entry.record).filter((queued) => queued.held?.until !== until);
    if (newlyHeld.length > 0)
      this.parts.log.stage(
        entry,
        newlyHeld.map((queued) => ({
          type: 'input.held',
          inputId: queued.inputId,
          runId: queued.runId,
          until,
          reason: 'plan_limit',
        })),
      );
    const sessionId = entry.record.sessionId;
    clearTimeout(this.reopenTimers.get(sessionId));
    // A timer that fires a little early finds the window still closed and waits again.
    const delay = Math.min(Math.max(0, Date.parse(until) - Date.now()), longestTimerMs);
    const timer = setTimeout(() => {
      this.reopenTimers.delete(sessionId);
      const resident = this.parts.resident(sessionId);
      if (resident) this.continueAfterRun(resident);
    }, delay);
    // A reset hours away keeps no process alive: a runtime that stops cancels what it queued anyway.
    timer.unref();
    this.reopenTimers.set(sessionId, timer);
  }

  /** The plan limits changed: follow-ups held by them start if the window reopened (a report of allowed). */
  private limitsChanged(sessionId: string): void {
    const entry = this.parts.resident(sessionId);
    if (!entry || entry.record.activeRunId !== null) return;
    if (!queuedAfterTurn(entry.record).some((queued) => queued.held)) return;
    this.continueAfterRun(entry);
  }

  private start(entry: SessionEntry, next: QueuedInput, held: HeldInput): void {
    const { runId, inputId } = next;
    clearTimeout(this.reopenTimers.get(entry.record.sessionId));
    this.reopenTimers.delete(entry.record.sessionId);
    const started: EventBody[] = [
      { type: 'input.started', runId, inputId },
      { type: 'run.started', runId, input: held.recorded ? [...held.recorded] : null, inputRedacted: !held.recorded },
    ];
    this.parts.log.stage(entry, started);
    // The writer dropped it (the session's output cannot be stored): the repair's end starts it later.
    if (entry.record.activeRunId !== runId) return;
    const turn = turnForAgent(runId, held.provider, held.files, () => turnInputPlace(entry.record));
    this.parts.startRun(entry, runId, (session) => session.doTurn(turn));
  }

  /**
   * After events were stored and published: content of inputs that ended is let go, and sessions
   * whose run ended continue (the one path for ends the runtime did not stage itself, e.g. a repair).
   */
  published(events: readonly ProtocolEvent[]): void {
    for (const event of events) {
      if (event.type === 'input.started') {
        this.held.delete(event.inputId);
        this.settleWaiters(event.runId);
      } else if (event.type === 'input.cancelled') this.drop(event.inputId);
      else if (event.type === 'run.completed') {
        const entry = this.parts.resident(event.sessionId);
        if (entry) this.continueAfterRun(entry);
      } else if (event.type === 'session.limits_changed') this.limitsChanged(event.sessionId);
    }
  }

  /**
   * Whether a provider's input.folded or input.cancelled part names a steer of this run that has
   * not ended: anything else (an after_turn input, which only the runtime ends; an unknown id; a
   * second end) never enters the log.
   */
  acceptsInputPart(entry: SessionEntry, part: AgentProviderV1Part): boolean {
    // A part that is no object at all is the provider-part check's to refuse.
    const named = part as { type?: unknown; inputId?: unknown; runId?: unknown } | null;
    if (named?.type !== 'input.folded' && named?.type !== 'input.cancelled') return true;
    return (entry.record.queuedInputs ?? []).some(
      (queued) => queued.inputId === named.inputId && queued.delivery === 'steer' && queued.runId === named.runId,
    );
  }
}

/** How a steer the agent never settled ends with its run: interrupted with it, else refused (the run ended first). */
function steerEnding(entry: SessionEntry, queued: QueuedInput): EventBody {
  const lastRun = entry.record.lastRun;
  if (lastRun?.runId === queued.runId && lastRun.outcome === 'interrupted') {
    return queuedInputCancellations([queued], 'interrupted')[0]!;
  }
  const outcome = lastRun?.runId === queued.runId ? lastRun.outcome : 'ended';
  return queuedInputCancellations([queued], 'agent_refused', {
    code: 'provider_rejected',
    message: `The run ended (${outcome}) before the agent took this input in. Submit it again as a new turn.`,
    retryable: true,
    details: { reason: 'run_ended' },
  })[0]!;
}

/** A follow-up's refused file reference, as its cancellation says it: what changed, and what to do. */
function notStartable(refusal: AgentError): SerializedAgentError {
  const refused = refusal.toObject();
  return {
    ...refused,
    message: `The follow-up was not started: a file it refers to changed while it was queued. ${refused.message} Then submit the follow-up again (the queue went on without it).`,
  };
}

function notStarted(runId: string): AgentError {
  return new AgentError({
    code: 'run_not_found',
    message: `Run ${runId} never started: the input queued as it was cancelled (see its input.cancelled event).`,
  });
}
