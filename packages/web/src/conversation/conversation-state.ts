import {
  type ChangedFile,
  type ContextUsage,
  type InputCancelReason,
  type InputDelivery,
  type InputPart,
  type PlanLimits,
  type InteractionAnswer,
  type InteractionRequest,
  type PermissionMode,
  type ProtocolEvent,
  type RecordedFilePart,
  type RecordedImagePart,
  type RestoredFiles,
  type RunOutcome,
  type SerializedAgentError,
  type TokenUsage,
  type WorkspaceStatus,
  addUsage,
  checkpointStartsAnew,
  agentDirectory,
  zeroUsage,
} from '@tether/protocol';

/** What became of an interaction, as the conversation shows it. */
export type InteractionResult =
  | 'pending'
  | 'approved'
  | 'denied'
  | 'answered'
  | 'declined'
  | 'withdrawn'
  | 'cancelled'
  | 'send_failed';

export interface InteractionEntry {
  readonly interactionRef: string;
  readonly runId: string;
  readonly request: InteractionRequest;
  readonly result: InteractionResult;
  readonly answer: InteractionAnswer | null;
  /** Withdrawn while its run was being stopped: the stop took it away, not the agent's own choice. */
  readonly withdrawnByStop: boolean;
}

/** One piece of a run, in the order it happened. */
export type RunPart =
  | { readonly kind: 'text'; readonly blockId: string; readonly text: string; readonly subagent: boolean }
  | { readonly kind: 'thinking'; readonly blockId: string; readonly text: string }
  | {
      readonly kind: 'tool';
      readonly toolUseId: string;
      readonly toolName: string;
      readonly status: 'invoked' | 'succeeded' | 'failed';
    }
  | { readonly kind: 'interaction'; readonly interactionRef: string }
  | { readonly kind: 'control'; readonly name: string; readonly status: string; readonly output: string }
  /** The context was replaced by a summary (context.compacted): asked for, or by the agent as it filled up. */
  | {
      readonly kind: 'compaction';
      readonly trigger: 'requested' | 'automatic';
      readonly tokensBefore: number | null;
      readonly tokensAfter: number | null;
    }
  /** A follow-up sent while this run worked that ended here: steered into it, or cancelled while it waited. */
  | { readonly kind: 'follow_up'; readonly inputId: string; readonly followUp: FollowUp };

/** A turn sent while a run was active (input.queued), until it started, was folded in or was cancelled. */
export interface FollowUp {
  readonly inputId: string;
  readonly delivery: InputDelivery;
  /** after_turn: the run it starts as; steer: the run it was sent into. */
  readonly runId: string;
  /** Its text; null when redacted. */
  readonly text: string | null;
  readonly status: 'queued' | 'started' | 'folded' | 'cancelled';
  readonly cancelReason: InputCancelReason | null;
  readonly error: SerializedAgentError | null;
  /** after_turn: held by the plan limit until this time (ISO-8601, input.held); null once any run starts. */
  readonly heldUntil: string | null;
}

/** What a turn carried besides its text: images (by their blob's sha256) and workspace files. */
export type RunAttachment = RecordedImagePart | RecordedFilePart;

/** The files a run changed in its workspace (run.files_changed), as git counts them. */
export interface RunChangedFiles {
  readonly files: readonly ChangedFile[];
  /** More files changed than are listed. */
  readonly truncated: boolean;
}

/** Where the agent's conversation stood after the run (run.checkpointed). */
export interface RunCheckpoint {
  /** Null when the run took no input of the host's (the agent began it, or /clear): no files to put back. */
  readonly inputMessageId: string | null;
  /** Null when the agent answered nothing: no fork can end with this run. */
  readonly lastMessageId: string | null;
}

export interface RunEntry {
  readonly runId: string;
  readonly startedAt: string;
  /** The turn's text; null when redacted or for a control. */
  readonly input: string | null;
  readonly attachments: readonly RunAttachment[];
  readonly inputRedacted: boolean;
  /** Set when the run is a control (compact, clear, cost, …). */
  readonly control: string | null;
  readonly parts: readonly RunPart[];
  readonly usage: TokenUsage | null;
  readonly outcome: RunOutcome | null;
  readonly error: SerializedAgentError | null;
  readonly stopRequested: boolean;
  readonly queuePosition: number | null;
  readonly retry: { readonly attempt: number; readonly maxAttempts: number } | null;
  readonly checkpoint: RunCheckpoint | null;
  /** A rewind took the conversation back to before this run (or an earlier one): the agent no longer has it. */
  readonly rewound: boolean;
  /** Set on the run a rewind went back to before; files: what was put back on disk (null: not asked). */
  readonly rewoundTo: { readonly files: RestoredFiles | null } | null;
  /** Sessions forked from this session with this run as their last turn. */
  readonly forks: readonly string[];
  /** What the run changed in the workspace; null until known (or for a workspace that does not track it). */
  readonly changedFiles: RunChangedFiles | null;
  /** Set when the run is a follow-up that was queued while another run worked (input.started). */
  readonly fromQueue: string | null;
  /** The agent began this turn by itself (a background task finished): it has no input of the user's. */
  readonly startedByAgent: boolean;
}

/** Where a fork's conversation came from (session.opened.forkedFrom). */
export interface ForkOrigin {
  readonly sessionId: string;
  /** The source's run the conversation ends with; null: all of the source's conversation. */
  readonly runId: string | null;
}

/** A session as its events describe it: everything the session view shows, folded in seq order. */
export interface ConversationState {
  readonly lastSeq: number;
  readonly provider: string | null;
  readonly workspacePath: string | null;
  /** What Tether made of the workspace (a worktree, its branch; kept or removed once released); null until told. */
  readonly workspace: WorkspaceStatus | null;
  /** The seq of the last event after which the workspace's status may read differently (ready, released, a run's changes). */
  readonly workspaceSeq: number;
  readonly model: string | null;
  readonly mode: PermissionMode | null;
  readonly closed: boolean;
  readonly forkedFrom: ForkOrigin | null;
  /** Forks of the whole conversation (no run named). */
  readonly forks: readonly string[];
  /** The seq of the last event that can change which modes need an agent restart (process, mode, open, close). */
  readonly agentSeq: number;
  readonly runs: readonly RunEntry[];
  readonly interactions: Readonly<Record<string, InteractionEntry>>;
  readonly totalUsage: TokenUsage;
  /** Follow-ups by input id, every one seen (waitingFollowUps lists those still waiting). */
  readonly followUps: Readonly<Record<string, FollowUp>>;
  /** The account's plan limits as the agent last reported them; null until it did. */
  readonly limits: PlanLimits | null;
  /** How full the agent's context was, measured after the last run; null until measured. */
  readonly contextUsage: ContextUsage | null;
}

export const emptyConversation: ConversationState = {
  lastSeq: 0,
  provider: null,
  workspacePath: null,
  workspace: null,
  workspaceSeq: 0,
  model: null,
  mode: null,
  closed: false,
  forkedFrom: null,
  forks: [],
  agentSeq: 0,
  runs: [],
  interactions: {},
  totalUsage: zeroUsage,
  followUps: {},
  limits: null,
  contextUsage: null,
};

export function activeRun(state: ConversationState): RunEntry | null {
  const last = state.runs.at(-1);
  return last !== undefined && last.outcome === null ? last : null;
}

/** Follow-ups not yet started, folded in or cancelled, oldest first: they can still be withdrawn. */
function withoutHolds(followUps: Readonly<Record<string, FollowUp>>): Readonly<Record<string, FollowUp>> {
  if (!Object.values(followUps).some((followUp) => followUp.heldUntil !== null)) return followUps;
  return Object.fromEntries(
    Object.entries(followUps).map(([inputId, followUp]) => [inputId, { ...followUp, heldUntil: null }]),
  );
}

export function waitingFollowUps(state: ConversationState): FollowUp[] {
  return Object.values(state.followUps).filter((followUp) => followUp.status === 'queued');
}

function textOf(input: readonly InputPart[] | null): string | null {
  if (input === null) return null;
  return input.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/** A follow-up as a line: its text, and what it carries besides (an image-only one read as blank). */
function followUpText(input: readonly InputPart[] | null): string | null {
  const text = textOf(input);
  if (input === null || text === null) return null;
  const images = input.filter((part) => part.type === 'image').length;
  const extras = [
    ...(images === 0 ? [] : [`${images} image${images === 1 ? '' : 's'}`]),
    ...input.flatMap((part) => (part.type === 'file' ? [`file ${part.path}`] : [])),
  ];
  if (extras.length === 0) return text;
  return text === '' ? `(${extras.join(', ')})` : `${text} (with ${extras.join(', ')})`;
}

/**
 * Ends a follow-up. One that ends inside a run (steered in, or cancelled while it waited behind the
 * run) shows there, where it happened; one that started is its own run.
 */
function endFollowUp(
  state: ConversationState,
  inputId: string,
  change: Pick<FollowUp, 'status'> & Partial<Pick<FollowUp, 'cancelReason' | 'error'>>,
  inRun: string | null,
): ConversationState {
  const followUp = state.followUps[inputId];
  if (followUp === undefined) return state;
  const ended: FollowUp = { ...followUp, ...change };
  const next = { ...state, followUps: { ...state.followUps, [inputId]: ended } };
  if (inRun === null) return next;
  return updateRun(next, inRun, (run) => ({
    ...run,
    parts: [...run.parts, { kind: 'follow_up', inputId, followUp: ended }],
  }));
}

/** Interactions still waiting for an answer, oldest first. */
export function openInteractions(state: ConversationState): InteractionEntry[] {
  return Object.values(state.interactions).filter((interaction) => interaction.result === 'pending');
}

function updateRun(state: ConversationState, runId: string, change: (run: RunEntry) => RunEntry): ConversationState {
  const index = state.runs.findLastIndex((run) => run.runId === runId);
  if (index === -1) return state;
  const runs = state.runs.slice();
  runs[index] = change(runs[index]!);
  return { ...state, runs };
}

/**
 * The run's parts without the text of blocks a failed model call had begun to stream: the call is
 * made again from the start, so that text is not part of the answer (the retry streams it anew); or
 * no retry followed, and the agent kept none of it.
 */
function withoutAbandonedBlocks(
  parts: readonly RunPart[],
  abandonedBlockIds: readonly string[] | undefined,
): readonly RunPart[] {
  if (abandonedBlockIds === undefined) return parts;
  const abandoned = new Set(abandonedBlockIds);
  return parts.filter((part) => !((part.kind === 'text' || part.kind === 'thinking') && abandoned.has(part.blockId)));
}

/** Appends streamed text to its block, or starts the block. */
function appendText(
  run: RunEntry,
  kind: 'text' | 'thinking',
  blockId: string,
  text: string,
  subagent: boolean,
): RunEntry {
  const parts = run.parts.slice();
  const index = parts.findLastIndex((part) => part.kind === kind && part.blockId === blockId);
  if (index === -1) parts.push(kind === 'text' ? { kind, blockId, text, subagent } : { kind, blockId, text });
  else {
    const part = parts[index] as Extract<RunPart, { kind: 'text' | 'thinking' }>;
    parts[index] = { ...part, text: part.text + text };
  }
  return { ...run, parts };
}

function setInteraction(
  state: ConversationState,
  interactionRef: string,
  result: InteractionResult,
  answer: InteractionAnswer | null = null,
  withdrawnByStop = false,
): ConversationState {
  const entry = state.interactions[interactionRef];
  if (entry === undefined) return state;
  return {
    ...state,
    interactions: { ...state.interactions, [interactionRef]: { ...entry, result, answer, withdrawnByStop } },
  };
}

function inputText(event: Extract<ProtocolEvent, { type: 'run.started' }>): string | null {
  return event.control !== undefined ? null : textOf(event.input);
}

function inputAttachments(event: Extract<ProtocolEvent, { type: 'run.started' }>): RunAttachment[] {
  return (event.input ?? []).filter((part): part is RunAttachment => part.type !== 'text');
}

/** A completed turn the agent kept a checkpoint after: a fork can end with it. */
export function canForkAt(run: RunEntry): boolean {
  return run.control === null && run.outcome !== null && run.checkpoint?.lastMessageId != null;
}

/** A completed turn still in the agent's context: the conversation can go back to before it. */
export function canRewindTo(run: RunEntry): boolean {
  return run.control === null && run.outcome !== null && !run.rewound;
}

/**
 * Whether a rewind to before `run` can put its files back: its input has a file checkpoint, and no
 * /clear since (still in the agent's context) started a new conversation, whose agent keeps none of
 * the old one's.
 */
export function canRestoreFilesOf(runs: readonly RunEntry[], run: RunEntry): boolean {
  if (run.checkpoint?.inputMessageId == null) return false;
  const later = runs.slice(runs.indexOf(run) + 1);
  return !later.some((other) => !other.rewound && other.checkpoint !== null && checkpointStartsAnew(other.checkpoint));
}

/**
 * Whether a control's output is what its run already answered: the CLI answers /cost and /context
 * with an assistant message of their text too, shown above it, so it would otherwise appear twice.
 */
export function controlOutputShownAsAnswer(run: RunEntry, output: string): boolean {
  const answer = run.parts
    .flatMap((part) => (part.kind === 'text' && !part.subagent ? [part.text] : []))
    .join('')
    .trim();
  return answer !== '' && answer === output.trim();
}

/** The number of the turn (1-based, controls not counted) a run is, or null when it is not a turn here. */
export function turnNumber(state: ConversationState, runId: string): number | null {
  const turns = state.runs.filter((run) => run.control === null);
  const index = turns.findIndex((run) => run.runId === runId);
  return index === -1 ? null : index + 1;
}

/** Folds one event in. Events at or below lastSeq were already folded and are ignored. */
export function applyEvent(state: ConversationState, event: ProtocolEvent): ConversationState {
  if (event.seq <= state.lastSeq) return state;
  const next = foldEvent(state, event);
  return { ...next, lastSeq: event.seq, agentSeq: changesAgent(event) ? event.seq : next.agentSeq };
}

function changesAgent(event: ProtocolEvent): boolean {
  switch (event.type) {
    case 'session.opened':
    case 'session.closed':
    case 'session.mode_changed':
    case 'session.process_started':
    case 'session.process_stopped':
      return true;
    default:
      return false;
  }
}

function foldEvent(state: ConversationState, event: ProtocolEvent): ConversationState {
  switch (event.type) {
    case 'session.opened':
      return {
        ...state,
        provider: event.provider,
        workspacePath: agentDirectory(event.workspace, null),
        closed: false,
        forkedFrom: event.forkedFrom ?? state.forkedFrom,
      };
    case 'session.closed':
      return { ...state, closed: true };
    case 'session.model_changed':
      return { ...state, model: event.model };
    case 'session.mode_changed':
      return { ...state, mode: event.mode };
    case 'run.started':
      return {
        ...state,
        // Held follow-ups now wait for this run as any does (the runtime drops their holds): its end decides again.
        followUps: withoutHolds(state.followUps),
        runs: [
          ...state.runs,
          {
            runId: event.runId,
            startedAt: event.at,
            input: inputText(event),
            attachments: inputAttachments(event),
            inputRedacted: event.inputRedacted,
            control: event.control?.name ?? null,
            parts: [],
            usage: null,
            outcome: null,
            error: null,
            stopRequested: false,
            queuePosition: null,
            retry: null,
            checkpoint: null,
            rewound: false,
            rewoundTo: null,
            forks: [],
            changedFiles: null,
            fromQueue:
              Object.values(state.followUps).find(
                (followUp) => followUp.runId === event.runId && followUp.status === 'started',
              )?.inputId ?? null,
            startedByAgent: event.startedBy === 'agent',
          },
        ],
      };
    case 'run.queued':
      return updateRun(state, event.runId, (run) => ({ ...run, queuePosition: event.position }));
    case 'run.interrupt_requested':
      return updateRun(state, event.runId, (run) => ({ ...run, stopRequested: true }));
    case 'run.message_delta':
      return updateRun(state, event.runId, (run) =>
        appendText(
          { ...run, queuePosition: null, retry: null },
          'text',
          event.blockId,
          event.text,
          event.parentToolUseId !== undefined,
        ),
      );
    case 'run.thinking_delta':
      return updateRun(state, event.runId, (run) =>
        appendText({ ...run, queuePosition: null }, 'thinking', event.blockId, event.text, false),
      );
    case 'run.retrying':
      return updateRun(state, event.runId, (run) => ({
        ...run,
        retry: { attempt: event.attempt, maxAttempts: event.maxAttempts },
        parts: withoutAbandonedBlocks(run.parts, event.abandonedBlockIds),
      }));
    case 'run.tool_activity':
      return updateRun(state, event.runId, (run) => {
        const parts = run.parts.slice();
        const index = parts.findLastIndex((part) => part.kind === 'tool' && part.toolUseId === event.toolUseId);
        const row: RunPart = {
          kind: 'tool',
          toolUseId: event.toolUseId,
          toolName: event.toolName,
          status: event.status,
        };
        if (index === -1) parts.push(row);
        else parts[index] = row;
        return { ...run, parts };
      });
    case 'run.usage': {
      const usage: TokenUsage = {
        inputTokens: event.inputTokens,
        outputTokens: event.outputTokens,
        cacheReadTokens: event.cacheReadTokens,
        cacheCreationTokens: event.cacheCreationTokens,
        costUsd: event.costUsd,
      };
      return {
        ...updateRun(state, event.runId, (run) => ({
          ...run,
          usage: run.usage === null ? usage : addUsage(run.usage, usage),
        })),
        totalUsage: addUsage(state.totalUsage, usage),
      };
    }
    case 'run.completed':
      return updateRun(state, event.runId, (run) => ({
        ...run,
        outcome: event.outcome,
        error: event.error ?? null,
        queuePosition: null,
        retry: null,
        parts: withoutAbandonedBlocks(run.parts, event.abandonedBlockIds),
      }));
    case 'context.compacted':
      return updateRun(state, event.runId, (run) => ({
        ...run,
        parts: [
          ...run.parts,
          {
            kind: 'compaction',
            trigger: event.trigger,
            tokensBefore: event.tokensBefore,
            tokensAfter: event.tokensAfter,
          },
        ],
      }));
    case 'control.completed':
      return updateRun(state, event.runId, (run) => ({
        ...run,
        parts: [...run.parts, { kind: 'control', name: event.name, status: event.status, output: event.output }],
      }));
    case 'interaction.requested': {
      const entry: InteractionEntry = {
        interactionRef: event.interactionRef,
        runId: event.runId,
        request: event.request,
        result: 'pending',
        answer: null,
        withdrawnByStop: false,
      };
      const withEntry = { ...state, interactions: { ...state.interactions, [event.interactionRef]: entry } };
      return updateRun(withEntry, event.runId, (run) => ({
        ...run,
        parts: [...run.parts, { kind: 'interaction', interactionRef: event.interactionRef }],
      }));
    }
    case 'interaction.settled':
      return setInteraction(state, event.interactionRef, event.outcome, event.answer);
    case 'interaction.withdrawn': {
      // The CLI withdraws an open prompt when it is interrupted, as it does when the agent changes its mind.
      const stopping = state.runs.findLast((run) => run.runId === event.runId)?.stopRequested === true;
      return setInteraction(state, event.interactionRef, 'withdrawn', null, stopping);
    }
    case 'interaction.cancelled':
      return setInteraction(state, event.interactionRef, 'cancelled');
    case 'interaction.send_failed':
      return setInteraction(state, event.interactionRef, 'send_failed');
    case 'session.provider_session_changed':
    case 'session.process_started':
    case 'session.process_stopped':
    case 'context.cleared':
    case 'diagnostic':
      return state;
    case 'input.held': {
      const followUp = state.followUps[event.inputId];
      if (!followUp) return state;
      return { ...state, followUps: { ...state.followUps, [event.inputId]: { ...followUp, heldUntil: event.until } } };
    }
    case 'input.queued':
      return {
        ...state,
        followUps: {
          ...state.followUps,
          [event.inputId]: {
            inputId: event.inputId,
            delivery: event.delivery,
            runId: event.runId,
            text: followUpText(event.input),
            status: 'queued',
            cancelReason: null,
            error: null,
            heldUntil: null,
          },
        },
      };
    case 'input.started':
      return endFollowUp(state, event.inputId, { status: 'started' }, null);
    case 'input.folded':
      return endFollowUp(state, event.inputId, { status: 'folded' }, event.runId);
    case 'input.cancelled': {
      // Shown in the run it waited behind or was steered into: the last one there is.
      const lastRun = state.runs.at(-1)?.runId ?? null;
      return endFollowUp(
        state,
        event.inputId,
        { status: 'cancelled', cancelReason: event.reason, error: event.error ?? null },
        lastRun,
      );
    }
    case 'session.limits_changed':
      return { ...state, limits: event.limits };
    case 'session.context_measured':
      return { ...state, contextUsage: event.contextUsage };
    case 'session.workspace_ready':
    case 'session.workspace_released':
      return { ...state, workspace: event.workspace, workspaceSeq: event.seq };
    case 'run.files_changed':
      return {
        ...updateRun(state, event.runId, (run) => ({
          ...run,
          changedFiles: { files: event.files, truncated: event.truncated },
        })),
        workspaceSeq: event.seq,
      };
    case 'run.checkpointed':
      return updateRun(state, event.runId, (run) => ({
        ...run,
        checkpoint: { inputMessageId: event.inputMessageId, lastMessageId: event.lastMessageId },
      }));
    case 'session.forked':
      if (event.atRunId === null) return { ...state, forks: [...state.forks, event.forkSessionId] };
      return updateRun(state, event.atRunId, (run) => ({ ...run, forks: [...run.forks, event.forkSessionId] }));
    case 'session.rewound': {
      const index = state.runs.findLastIndex((run) => run.runId === event.toRunId);
      if (index === -1) return state;
      return {
        ...state,
        runs: state.runs.map((run, position) =>
          position < index
            ? run
            : { ...run, rewound: true, rewoundTo: position === index ? { files: event.files } : run.rewoundTo },
        ),
      };
    }
  }
}
