import {
  AgentError,
  type CancelQueuedInputCommand,
  type CloseSessionCommand,
  type EventBody,
  type InputCancelReason,
  type InputDelivery,
  type InputPart,
  type InterruptRunCommand,
  type QueuedInput,
  type SerializedAgentError,
  type OpenSessionCommand,
  type RunControlCommand,
  ControlName,
  type SubmitTurnCommand,
  addUsage,
  countsAsActivity,
  describeConfiguration,
  newInputId,
  turnTitle,
} from '@tether/protocol';
import type { RunRecord, SessionRecord } from '../store/tether-store.js';
import { type Decided, type Refusal, isRefusal } from './refusal.js';

/** Impure inputs to a decision, passed in so decide stays a pure function. */
export interface DecisionContext {
  readonly newRunId: () => string;
}

export interface Decision {
  readonly events: EventBody[];
}

/** submit_turn and run_control: the run they start. */
export interface RunDecision extends Decision {
  readonly runId: string;
}

/** interrupt_run: the run it applies to (null: none is active, or another is). */
export interface InterruptDecision extends Decision {
  readonly runId: string | null;
}

export function sessionNotFound(): Refusal {
  return {
    refusal: new AgentError({
      code: 'session_not_found',
      message: 'No session has that id. Check the id, or open a new session with open_session.',
    }),
  };
}

/** `then` completes the advice for the command refused: what to do once the session is reopened. */
export function sessionClosed(then: string): Refusal {
  return {
    refusal: new AgentError({
      code: 'session_closed',
      message: `The session is closed. Reopen it with open_session and continueSession${then}`,
    }),
  };
}

export function decideReopen(state: SessionRecord | undefined, _command: OpenSessionCommand): Decided<Decision> {
  if (!state) return sessionNotFound();
  if (state.state !== 'closed') return { events: [] };
  return {
    events: [
      {
        type: 'session.opened',
        provider: state.provider,
        workspace: state.workspace,
        configuration: describeConfiguration(state.configuration),
        ephemeral: state.ephemeral,
        reopened: true,
      },
    ],
  };
}

/** submit_turn's impure inputs: the run id, the input id of a follow-up, and the turn's input as read and checked (what run.started records). */
export interface TurnDecisionContext extends DecisionContext {
  readonly input: readonly InputPart[];
  readonly newInputId?: () => string;
}

/**
 * submit_turn: the run, and whether its input is recorded (not redacted), so its blobs are stored
 * with it. `queued` when a run was active and the host gave a delivery: after_turn waits to start
 * as `runId`; steer goes into the running run `runId`.
 */
export interface TurnDecision extends RunDecision {
  readonly inputRecorded: boolean;
  readonly queued?: { readonly inputId: string; readonly delivery: InputDelivery };
}

function runActive(message: string): Refusal {
  return { refusal: new AgentError({ code: 'run_active', message }) };
}

/** The session's queued after_turn inputs, oldest first: they start, in this order, once no run is active. */
export function queuedAfterTurn(state: SessionRecord): QueuedInput[] {
  return (state.queuedInputs ?? []).filter((queued) => queued.delivery === 'after_turn');
}

/**
 * Whether a new run has to wait: one is active, or queued follow-ups start first. Follow-ups held by
 * the plan limit do not make the host wait: its turn is asked for now, so it runs and the API answers
 * (Tether's view of the window is only the last report), and the held ones keep their place.
 */
function isBusy(state: SessionRecord): boolean {
  return state.activeRunId !== null || queuedAfterTurn(state).some((queued) => !queued.held);
}

/** The session's budget is spent: no new run starts (the cost as the agent reported it). */
export function budgetSpent(state: SessionRecord): AgentError | undefined {
  const { maxCostUsd } = state.configuration;
  const spent = state.usage.costUsd;
  if (maxCostUsd === undefined || spent === null || spent < maxCostUsd) return undefined;
  return new AgentError({
    code: 'budget_exceeded',
    message: `The session has spent $${spent.toFixed(4)} of its $${maxCostUsd} budget (maxCostUsd), so it takes no more turns (a session's budget cannot be raised). To go on, fork it (fork_session: its conversation continues in a new session with a budget of its own), or open a new session.`,
    details: { reason: 'max_cost' },
  });
}

/**
 * Why a session cannot take a turn now (missing, closed, busy, its budget spent); undefined when
 * it can. With a delivery a busy session takes it as a follow-up.
 */
export function refuseNewRun(state: SessionRecord | undefined, delivery?: InputDelivery): Refusal | undefined {
  if (!state) return sessionNotFound();
  if (state.state === 'closed') return sessionClosed(' set to its id, then submit again.');
  if (delivery === undefined && isBusy(state)) {
    return runActive(
      state.activeRunId !== null
        ? 'The session already has an active run. Wait for its run.completed event (or interrupt it), then submit again; or submit with delivery after_turn (queued as the next run) or steer (into the running turn).'
        : 'The session has queued follow-ups that start first. Submit with delivery after_turn to queue behind them, or wait until they ran.',
    );
  }
  const spent = budgetSpent(state);
  return spent ? { refusal: spent } : undefined;
}

export function decideSubmitTurn(
  state: SessionRecord | undefined,
  command: SubmitTurnCommand,
  context: TurnDecisionContext,
): Decided<TurnDecision> {
  const refused = refuseNewRun(state, command.delivery);
  if (refused || !state) return refused ?? sessionNotFound();
  const redact = command.redactInput ?? state.redactInput;
  const input = redact ? null : [...context.input];
  if (!isBusy(state) || command.delivery === undefined) {
    const runId = context.newRunId();
    return { runId, inputRecorded: !redact, events: [{ type: 'run.started', runId, input, inputRedacted: redact }] };
  }
  const delivery = command.delivery;
  if (delivery === 'steer' && state.activeRunId === null) {
    return runActive(
      'No run is active to steer into: queued follow-ups are about to start. Submit with delivery after_turn, or steer once the next run is active.',
    );
  }
  const inputId = (context.newInputId ?? newInputId)();
  const runId = delivery === 'steer' ? state.activeRunId! : context.newRunId();
  return {
    runId,
    inputRecorded: !redact,
    queued: { inputId, delivery },
    events: [{ type: 'input.queued', inputId, delivery, runId, input, inputRedacted: redact }],
  };
}

/** How queued inputs end when something else ends them (an interrupt, a close, a restart). */
export function queuedInputCancellations(
  queued: readonly QueuedInput[],
  reason: InputCancelReason,
  error?: SerializedAgentError,
): EventBody[] {
  return queued.map((input) => ({
    type: 'input.cancelled',
    inputId: input.inputId,
    runId: input.runId,
    reason,
    ...(error ? { error } : {}),
  }));
}

/**
 * A control is a run of its own. A name Tether does not know never reaches the agent: the run
 * starts and completes in the same decision, as unsupported.
 */
export function decideRunControl(
  state: SessionRecord | undefined,
  command: RunControlCommand,
  context: DecisionContext,
): Decided<RunDecision> {
  const text = `/${command.name}${command.argument === undefined ? '' : ` ${command.argument}`}`;
  const started = decideSubmitTurn(
    state,
    {
      type: 'submit_turn',
      commandId: command.commandId,
      sessionId: command.sessionId,
      input: [{ type: 'text', text }],
    },
    { ...context, input: [{ type: 'text', text }] },
  );
  if (isRefusal(started)) return started;
  const { runId } = started;
  const events: EventBody[] = started.events.map((event) =>
    event.type === 'run.started' ? { ...event, control: { name: command.name } } : event,
  );
  if (!ControlName.safeParse(command.name).success) {
    events.push(
      { type: 'control.completed', runId, name: command.name, status: 'unsupported', output: '' },
      {
        type: 'run.completed',
        runId,
        outcome: 'failed',
        error: {
          code: 'capability_unsupported',
          message: `Tether does not know the control "${command.name}". Known controls: ${ControlName.options.join(', ')}.`,
          retryable: false,
        },
      },
    );
  }
  return { runId, events };
}

/**
 * A turn the agent began by itself: a run of its own, with no input, when the session could take a
 * host's turn now. Its budget is not checked: the agent is working already, and its cost counts.
 * Null when a run is active or queued follow-ups start first (they are the session's next runs), or
 * the session is closed.
 */
export function decideAgentRun(state: SessionRecord, context: DecisionContext): RunDecision | null {
  if (state.state === 'closed' || isBusy(state)) return null;
  const runId = context.newRunId();
  return { runId, events: [{ type: 'run.started', runId, input: [], inputRedacted: false, startedBy: 'agent' }] };
}

/**
 * interrupt_run: the active run to stop (null: none is active, or another is). With cancelQueued
 * the session's queued after_turn inputs are cancelled first, so the run's end starts none of them.
 */
export function decideInterrupt(
  state: SessionRecord | undefined,
  command: InterruptRunCommand,
): Decided<InterruptDecision> {
  if (!state) return sessionNotFound();
  const other = command.runId !== undefined && command.runId !== state.activeRunId;
  const events = command.cancelQueued && !other ? queuedInputCancellations(queuedAfterTurn(state), 'interrupted') : [];
  if (state.activeRunId === null || other) return { events, runId: null };
  return { events, runId: state.activeRunId };
}

/** cancel_queued_input: the cancellation of an after_turn input, or the steer to take back from the agent. */
export interface CancelQueuedDecision extends Decision {
  readonly steer?: QueuedInput;
}

/** The refusal of cancel_queued_input for an input that no longer waits (or never did here). */
export function inputNotQueued(inputId: string): Refusal {
  return {
    refusal: new AgentError({
      code: 'input_not_queued',
      message: `No input ${inputId} waits in this session: it started, was folded into its run or ended already (see its input.* events), or the id is not this session's.`,
    }),
  };
}

/**
 * cancel_queued_input: an after_turn input still waiting is withdrawn here; a steer not yet folded
 * in is the agent's to give back (the command asks it). An unknown id, or one that started, was
 * folded in or ended, is past withdrawing.
 */
export function decideCancelQueuedInput(
  state: SessionRecord | undefined,
  command: CancelQueuedInputCommand,
): Decided<CancelQueuedDecision> {
  if (!state) return sessionNotFound();
  const queued = (state.queuedInputs ?? []).find((input) => input.inputId === command.inputId);
  if (!queued) return inputNotQueued(command.inputId);
  if (queued.delivery === 'steer') return { events: [], steer: queued };
  return { events: queuedInputCancellations([queued], 'withdrawn') };
}

export function decideClose(state: SessionRecord | undefined, _command: CloseSessionCommand): Decided<Decision> {
  if (!state) return sessionNotFound();
  if (state.state === 'closed') return { events: [] };
  const events = queuedInputCancellations(state.queuedInputs ?? [], 'session_closed');
  if (state.activeRunId !== null) {
    events.push({
      type: 'run.completed',
      runId: state.activeRunId,
      outcome: 'interrupted',
      error: {
        code: 'session_closed',
        message: 'The session was closed while this run was active.',
        retryable: false,
      },
    });
  }
  events.push({ type: 'session.closed', reason: 'requested' });
  return { events };
}

/**
 * set_permission_mode, set_model and the reads of the agent's state work on an open session and
 * record what the agent answers (nothing yet). `then` is the advice once the session is reopened.
 */
export function decideOnOpenSession(state: SessionRecord | undefined, then: string): Decided<Decision> {
  if (!state) return sessionNotFound();
  if (state.state === 'closed') return sessionClosed(then);
  return { events: [] };
}

/** The session after an event. Pure: the same state and event always give the same result. */
export function evolveSession(state: SessionRecord, event: EventBody, at: string): SessionRecord {
  const next = evolveSessionFacts(state, event, at);
  // Streamed output shares its millisecond (and so its `at`) with its neighbours: no copy per delta then.
  if (!countsAsActivity(event.type) || next.lastActivityAt === at) return next;
  return { ...next, lastActivityAt: at };
}

function evolveSessionFacts(state: SessionRecord, event: EventBody, at: string): SessionRecord {
  switch (event.type) {
    case 'session.opened':
      return { ...state, state: 'idle', activeRunId: null, updatedAt: at };
    case 'session.closed':
      return { ...state, state: 'closed', activeRunId: null, updatedAt: at };
    case 'session.provider_session_changed':
      // The copy a fork or rewind started from now exists under its own id: resume that from here on.
      return { ...state, providerSessionId: event.providerSessionId, copyConversation: null, updatedAt: at };
    case 'session.model_changed': {
      // Same rule as the mode: a host's choice, or a change after the first report, is what the next process launches with.
      const follow = event.source === 'command' || (state.model !== null && state.model !== event.model);
      return {
        ...state,
        model: event.model,
        configuration: follow ? { ...state.configuration, model: event.model } : state.configuration,
        updatedAt: at,
      };
    }
    case 'session.process_started':
      return {
        ...state,
        liveProcess: { pid: event.pid, startTime: event.startTime, marker: event.marker },
        updatedAt: at,
      };
    case 'session.process_stopped':
      return { ...state, liveProcess: null, updatedAt: at };
    case 'session.mode_changed': {
      // The launch configuration follows a mode the host set, or a change after the first report
      // (e.g. leaving plan mode), so a later process resumes in the mode the session is in. The
      // first report alone may just be the user's default, which must not be pinned.
      const follow =
        event.source === 'command' || (state.permissionMode !== null && state.permissionMode !== event.mode);
      return {
        ...state,
        permissionMode: event.mode,
        configuration: follow ? { ...state.configuration, permissionMode: event.mode } : state.configuration,
        updatedAt: at,
      };
    }
    case 'run.started':
      return {
        ...state,
        state: 'running',
        activeRunId: event.runId,
        title: state.title ?? turnTitle(event),
        // Follow-ups that were held now wait for this run, as any does: its end decides again.
        ...(state.queuedInputs?.some((queued) => queued.held)
          ? { queuedInputs: state.queuedInputs.map(({ held: _held, ...queued }) => queued) }
          : {}),
        updatedAt: at,
      };
    case 'run.completed':
      if (state.activeRunId !== event.runId) return state;
      return {
        ...state,
        state: state.state === 'closed' ? 'closed' : 'idle',
        activeRunId: null,
        lastRun: { runId: event.runId, outcome: event.outcome, completedAt: at },
        updatedAt: at,
      };
    case 'run.usage': {
      const { type: _type, runId: _runId, ...usage } = event;
      return { ...state, usage: addUsage(state.usage, usage), updatedAt: at };
    }
    case 'session.rewound':
    // What a run changed is in the event; the workspace's count against its base is amended by the
    // runtime alongside it (it is not derived from the run's files).
    case 'run.files_changed':
      return { ...state, updatedAt: at };
    case 'session.workspace_ready':
    case 'session.workspace_released':
      return { ...state, workspaceStatus: event.workspace, updatedAt: at };
    case 'input.queued': {
      const queued = {
        inputId: event.inputId,
        delivery: event.delivery,
        runId: event.runId,
        queuedAt: at,
        preview: turnTitle(event),
      };
      return { ...state, queuedInputs: [...(state.queuedInputs ?? []), queued], updatedAt: at };
    }
    case 'input.started':
    case 'input.folded':
    case 'input.cancelled': {
      const queuedInputs = (state.queuedInputs ?? []).filter((queued) => queued.inputId !== event.inputId);
      return { ...state, queuedInputs, updatedAt: at };
    }
    case 'input.held': {
      const hold = { until: event.until, reason: event.reason };
      const queuedInputs = (state.queuedInputs ?? []).map((queued) =>
        queued.inputId === event.inputId ? { ...queued, held: hold } : queued,
      );
      return { ...state, queuedInputs, updatedAt: at };
    }
    case 'session.limits_changed':
      return { ...state, limits: event.limits, updatedAt: at };
    case 'session.context_measured':
      return { ...state, contextUsage: event.contextUsage, updatedAt: at };
    // The source of a fork is not changed by it: the event only tells its readers.
    case 'session.forked':
    case 'run.checkpointed':
    case 'run.interrupt_requested':
    case 'run.queued':
    case 'control.completed':
    case 'context.cleared':
    case 'context.compacted':
    case 'run.message_delta':
    case 'run.thinking_delta':
    case 'run.retrying':
    case 'run.tool_activity':
    case 'diagnostic':
    // Whether a session waits depends on its open interactions: see sessionStateWith.
    case 'interaction.requested':
    case 'interaction.settled':
    case 'interaction.withdrawn':
    case 'interaction.cancelled':
    case 'interaction.send_failed':
      return state;
    default:
      return assertNever(event);
  }
}

/** A run after an event of that run. */
export function evolveRun(
  run: RunRecord | undefined,
  sessionId: string,
  event: EventBody,
  at: string,
): RunRecord | undefined {
  switch (event.type) {
    case 'run.started':
      return {
        runId: event.runId,
        sessionId,
        status: 'running',
        outcome: null,
        error: null,
        usage: null,
        startedAt: at,
        completedAt: null,
        checkpoint: null,
      };
    case 'run.usage': {
      if (!run) return run;
      const { type: _type, runId: _runId, ...usage } = event;
      return { ...run, usage: run.usage ? addUsage(run.usage, usage) : usage };
    }
    case 'run.completed':
      if (!run || run.status === 'completed') return run;
      return { ...run, status: 'completed', outcome: event.outcome, error: event.error ?? null, completedAt: at };
    case 'run.checkpointed': {
      if (!run) return run;
      const { providerSessionId, inputMessageId, lastMessageId } = event;
      return { ...run, checkpoint: { providerSessionId, inputMessageId, lastMessageId } };
    }
    default:
      return run;
  }
}

export function assertNever(value: never): never {
  throw new Error(`Unhandled variant: ${JSON.stringify(value).slice(0, 200)}`);
}

/** Whether a provider part may enter the log: run parts must belong to the session's active run. */
export function acceptsProviderPart(state: SessionRecord, event: EventBody): boolean {
  if (state.state === 'closed') return false;
  if ('runId' in event && event.runId !== undefined) return event.runId === state.activeRunId;
  return true;
}
