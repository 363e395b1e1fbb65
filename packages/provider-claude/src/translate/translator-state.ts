import type { SerializedAgentError } from '@tether/protocol';
import type { Correlation } from './correlation.js';

/** The turn the CLI is working on for us: the run it belongs to and the uuid stamped on its input. */
/** One model call's tokens as its stream reported them (message_start, then message_delta's running counts). */
export interface StreamedTokens {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

export interface ActiveTurn {
  readonly runId: string;
  /**
   * The stamp frames are attributed by: the turn's input, then, when the run goes on as the turn of
   * an input steered into it (session/steered-inputs.ts), that input's.
   */
  uuid: string;
  /**
   * The uuid of the run's own input once the run goes on for a steered one: the agent keeps the
   * files as they were before the run under it, so the run's checkpoint names it, not the steer's.
   */
  runInputUuid?: string;
  /** The CLI has begun this input's turn (a stamp naming it: lifecycle started, init, status, stream, result). */
  started: boolean;
  /** The CLI has reported this turn's settings (its system/init: the model and mode it runs on). */
  initSeen?: true;
  /**
   * A set_model the CLI answered before it reported this turn's settings (set while the agent was
   * starting on it): the turn's init still names the model it was taken in on, and it runs on it,
   * while the answer holds from the next turn. That init's model is not reported as a change.
   */
  modelSetBeforeInit?: string;
  /** A host asked to stop it: its result ends the run as interrupted, whatever the CLI's wording. */
  interruptRequested: boolean;
  /**
   * A UserPromptSubmit hook refused the turn's prompt (system/informational `blocked_by_hook`): the
   * model was never called, and unless `promptKept` the conversation does not hold the prompt.
   */
  promptBlocked?: { readonly promptKept: boolean };
  /** The error token of the turn's synthetic API-error message (e.g. authentication_failed). */
  apiError?: string;
  /** Tool calls of the main answer started and not yet returned (time in tools is not a stall). */
  toolsRunning: number;
  /** The CLI has asked the model API for this turn (a stall can only happen after that). */
  requesting?: boolean;
  /**
   * The run is being stopped from our side (a watchdog fired, the agent broke the contract) and
   * ends failed with this error, whatever the agent reports for it.
   */
  failure?: SerializedAgentError;
  /**
   * The transcript id of the turn's latest answer of the main conversation (an `assistant` frame's
   * uuid): where a copy of the conversation can be cut after this turn (run.checkpointed).
   */
  lastMessageId?: string;
  /** The model's last stop reason in this turn, as the API named it (main conversation only). */
  stopReason?: string;
  /**
   * The tokens the stream reported for each model call of the turn (by stream and API message id):
   * what the run used when it ends without a result of the CLI's (stopped hard, crashed).
   */
  streamedUsage?: Map<string, StreamedTokens>;
  /** Set when the turn is a control (a slash command): its result also completes the control. */
  readonly control?: string;
  /** The CLI started a new, empty conversation in this turn (/clear's conversation_reset). */
  conversationReset?: true;
  /** The CLI compacted the conversation in this turn (a compact_boundary: /compact, or on its own). */
  compacted?: true;
  /**
   * The CLI began this turn by itself (for a background task's report): no input of ours, so its
   * frames carry no stamp and `uuid` names nothing.
   */
  readonly startedByAgent?: true;
}

/**
 * Everything the translator remembers between frames of one CLI process. Explicit so the
 * translator itself stays a function of (state, frame) that recorded transcripts can drive.
 */
export interface TranslatorState {
  turn: ActiveTurn | null;
  /** How frames are attributed to the turn (see correlation.ts); a legacy declaration lapses at the first stamp. */
  correlation: Correlation;
  /** This process has named some input of ours in a frame (so it is known to stamp). */
  stampSeen: boolean;
  /** The conversation id the process uses (the one passed to --session-id / --resume, then followed). */
  providerSessionId: string | null;
  /** The agent writes a transcript (not an ephemeral session): its turns can be copied and rewound. */
  readonly keepsTranscript: boolean;
  /** none: no tool input, nor the text a tool returned, enters run.tool_activity (the durable log). */
  readonly toolInputDetail: 'full' | 'none';
  /** The conversation id the runtime was last told about. */
  reportedProviderSessionId: string | null;
  /** The CLI has accepted a turn of this conversation (so a later process can --resume it). */
  conversationEstablished: boolean;
  /**
   * A turn of ours has started on this process. Until then a stop may come before the CLI read the
   * first turn's input: it answers as at idle and runs the turn, so the stop is sent again once the
   * turn starts (see interrupt-request.ts).
   */
  turnStartedOnProcess: boolean;
  /** The API message currently streaming, per stream (main answer = '', subagents by parent tool use id). */
  readonly currentMessageIds: Map<string, string>;
  /** API messages whose text arrived as deltas (their complete assistant frames are not re-emitted). */
  readonly streamedMessageIds: Set<string>;
  /**
   * Per stream, the blocks (by their index in the API message) that streamed text or thinking in the
   * message still open there (message_start seen, message_stop not yet).
   */
  readonly openMessageBlocks: Map<string, Map<number, string>>;
  /**
   * Per stream, the streamed blocks of the last message the CLI ended by abandoning them (its synthetic
   * message_stop names `abandoned_blocks` when a call fails mid-stream), until the retry's run.retrying
   * names them (abandonedBlockIds): the CLI keeps none of their text in the conversation.
   */
  readonly abandonedBlocks: Map<string, string[]>;
  readonly toolNames: Map<string, string>;
  /** A subagent's tool calls invoked and not yet returned, by tool use id: the id of the call that started the subagent. */
  readonly openSubagentCalls: Map<string, string>;
  /** What the CLI said it supports (system/init capabilities). */
  capabilities: readonly string[];
  /** Background tasks the CLI reports running (a process with some is not released when idle). */
  backgroundTasks: number;
  /** The model this process last reported. */
  reportedModel: string | null;
  /** The permission mode (CLI name) this process last reported. */
  reportedPermissionMode: string | null;
  /** total_cost_usd of the previous result of this process (it is cumulative per process). */
  lastCumulativeCostUsd: number | null;
  /** Diagnostic codes already reported for this process. */
  readonly notedDiagnostics: Set<string>;
}

export function createTranslatorState(options: {
  providerSessionId: string | null;
  reportedProviderSessionId: string | null;
  conversationEstablished: boolean;
  correlation?: Correlation;
  keepsTranscript?: boolean;
  toolInputDetail?: 'full' | 'none';
}): TranslatorState {
  return {
    turn: null,
    correlation: options.correlation ?? 'stamped',
    stampSeen: false,
    providerSessionId: options.providerSessionId,
    keepsTranscript: options.keepsTranscript ?? true,
    toolInputDetail: options.toolInputDetail ?? 'full',
    reportedProviderSessionId: options.reportedProviderSessionId,
    conversationEstablished: options.conversationEstablished,
    turnStartedOnProcess: false,
    currentMessageIds: new Map(),
    streamedMessageIds: new Set(),
    openMessageBlocks: new Map(),
    abandonedBlocks: new Map(),
    toolNames: new Map(),
    openSubagentCalls: new Map(),
    capabilities: [],
    backgroundTasks: 0,
    reportedModel: null,
    reportedPermissionMode: null,
    lastCumulativeCostUsd: null,
    notedDiagnostics: new Set(),
  };
}
