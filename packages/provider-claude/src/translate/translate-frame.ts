import { contextTokensLimit, deltaTextLimit } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { classifyRunEnd } from '../classify/classify-run-end.js';
import type {
  AssistantFrame,
  CliFrame,
  ResultFrame,
  StreamEventFrame,
  SystemFrame,
  UserFrame,
} from '../frames/cli-frame-schemas.js';
import { toNeutralPermissionMode } from '../launch/permission-modes.js';
import { checkpointOf } from './checkpoint.js';
import { applyStamps, attributedRunId, isStartupFailure, stampsOf } from './correlation.js';
import { noteStreamedUsage, runUsage } from './run-usage.js';
import { splitText } from './split-text.js';
import { stopReasonOf } from './stop-reason.js';
import { inputDetail, outputDetail } from './tool-activity-detail.js';
import type { TranslatorState } from './translator-state.js';

type Parts = AgentProviderV1Part[];

const mainStream = '';

function noteOnce(
  state: TranslatorState,
  parts: Parts,
  code: string,
  runId?: string,
  level: 'debug' | 'warning' = 'debug',
): void {
  if (state.notedDiagnostics.has(code)) return;
  state.notedDiagnostics.add(code);
  parts.push({ type: 'diagnostic', level, code, ...(runId ? { runId } : {}) });
}

/** The error tokens the agent puts on synthetic API-error messages (sdk.d.ts SDKAssistantMessageError); anything else reads `unknown`. */
const assistantErrors = new Set([
  'authentication_failed',
  'oauth_org_not_allowed',
  'account_on_hold',
  'verification_required',
  'billing_error',
  'rate_limit',
  'overloaded',
  'invalid_request',
  'model_not_found',
  'server_error',
  'unknown',
  'max_output_tokens',
  'cloud_credential_error',
]);

function deltaPart(
  kind: 'run.message_delta' | 'run.thinking_delta',
  runId: string,
  blockId: string,
  text: string,
  parentToolUseId: string | null | undefined,
): AgentProviderV1Part {
  // Built without a spread: this runs once per streamed delta.
  return parentToolUseId ? { type: kind, runId, blockId, text, parentToolUseId } : { type: kind, runId, blockId, text };
}

function pushText(
  parts: Parts,
  kind: 'run.message_delta' | 'run.thinking_delta',
  runId: string,
  blockId: string,
  text: string,
  parentToolUseId: string | null | undefined,
): void {
  if (text.length === 0) return;
  if (text.length <= deltaTextLimit) {
    parts.push(deltaPart(kind, runId, blockId, text, parentToolUseId));
    return;
  }
  for (const piece of splitText(text)) parts.push(deltaPart(kind, runId, blockId, piece, parentToolUseId));
}

/** Follows the CLI's conversation id (it changes with /clear) and tells the runtime once per change. */
function followSessionId(state: TranslatorState, sessionId: string, parts: Parts): void {
  state.providerSessionId = sessionId;
  state.conversationEstablished = true;
  if (sessionId === state.reportedProviderSessionId) return;
  state.reportedProviderSessionId = sessionId;
  parts.push({ type: 'session.provider_session_changed', providerSessionId: sessionId });
}

function translateSystem(state: TranslatorState, frame: SystemFrame, parts: Parts): void {
  // init and status lines both carry the mode in effect (status after a change).
  if (
    (frame.subtype === 'init' || frame.subtype === 'status') &&
    frame.permissionMode &&
    frame.permissionMode !== state.reportedPermissionMode
  ) {
    const mode = toNeutralPermissionMode(frame.permissionMode);
    if (mode) {
      state.reportedPermissionMode = frame.permissionMode;
      parts.push({ type: 'session.mode_changed', mode, source: 'provider' });
    }
  }
  if (frame.subtype === 'init') {
    if (frame.capabilities) state.capabilities = frame.capabilities;
    const turn = state.turn && attributedRunId(state) !== null ? state.turn : null;
    const setAhead = turn?.modelSetBeforeInit;
    if (turn) {
      turn.initSeen = true;
      delete turn.modelSetBeforeInit;
    }
    if (frame.model && frame.model !== state.reportedModel && setAhead === undefined) {
      state.reportedModel = frame.model;
      parts.push({ type: 'session.model_changed', model: frame.model.slice(0, 200), source: 'provider' });
    }
    if (frame.session_id && attributedRunId(state) !== null) followSessionId(state, frame.session_id, parts);
    return;
  }
  if (frame.subtype === 'status' && frame.status === 'requesting' && state.turn && attributedRunId(state) !== null) {
    state.turn.requesting = true;
  }
  // The prompt's text is in this frame's content: only the outcome is read, never the text.
  if (frame.subtype === 'informational' && frame.prompt_submit_outcome?.kind === 'blocked_by_hook') {
    if (state.turn && attributedRunId(state) !== null)
      state.turn.promptBlocked = { promptKept: frame.prompt_submit_outcome.prompt_kept === true };
    return;
  }
  if (frame.subtype === 'compact_boundary') {
    if (state.turn && attributedRunId(state) !== null) {
      state.turn.compacted = true;
      parts.push(compactedPart(state.turn.runId, frame));
    }
    return;
  }
  if (frame.subtype === 'background_tasks_changed') {
    state.backgroundTasks = frame.tasks?.length ?? 0;
    return;
  }
  if (frame.subtype === 'api_retry' && state.turn && attributedRunId(state) !== null) {
    const abandoned = abandonOpenMessage(state, frame.parent_tool_use_id ?? mainStream);
    parts.push({
      type: 'run.retrying',
      runId: state.turn.runId,
      attempt: Math.max(0, Math.trunc(frame.attempt ?? 0)),
      maxAttempts: Math.max(0, Math.trunc(frame.max_retries ?? 0)),
      delayMs: Math.max(0, frame.retry_delay_ms ?? 0),
      httpStatus: frame.error_status ?? null,
      ...(abandoned.length > 0 ? { abandonedBlockIds: abandoned } : {}),
    });
  }
}

/** A token count the agent reported, within the protocol's bound; null when it is not a count. */
function tokenCount(value: number | null | undefined): number | null {
  return Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= contextTokensLimit
    ? (value as number)
    : null;
}

/** compact_boundary: `manual` is a compaction the host asked for (the compact control); anything else the CLI's own. */
function compactedPart(runId: string, frame: SystemFrame): AgentProviderV1Part {
  const metadata = frame.compact_metadata;
  return {
    type: 'context.compacted',
    runId,
    trigger: metadata?.trigger === 'manual' ? 'requested' : 'automatic',
    tokensBefore: tokenCount(metadata?.pre_tokens),
    tokensAfter: tokenCount(metadata?.post_tokens),
  };
}

/** The most blocks one run.retrying or run.completed names (the protocol's bound; an API message has a handful). */
const abandonedBlocksLimit = 1000;

/**
 * What a retried call's failed attempt streamed that is not part of the answer, forgotten once told:
 * the blocks the CLI said it abandoned when it ended the message (CLI 2.1.332 ends a call that broke
 * off mid-stream with a synthetic message_stop naming them), or, should it retry with the message
 * still open, every block that message streamed. The call is made again from the start.
 */
function abandonOpenMessage(state: TranslatorState, stream: string): string[] {
  const abandoned = state.abandonedBlocks.get(stream) ?? [...(state.openMessageBlocks.get(stream)?.values() ?? [])];
  state.abandonedBlocks.delete(stream);
  state.openMessageBlocks.delete(stream);
  return abandoned.slice(0, abandonedBlocksLimit);
}

/** A message ended: the blocks from the index the CLI names in `abandoned_blocks` on are not kept. */
function endMessage(state: TranslatorState, frame: StreamEventFrame, stream: string): void {
  const blocks = state.openMessageBlocks.get(stream);
  state.openMessageBlocks.delete(stream);
  const from = frame.abandoned_blocks?.from_block_index;
  if (!blocks || typeof from !== 'number') return;
  const abandoned = [...blocks].filter(([index]) => index >= from).map(([, blockId]) => blockId);
  if (abandoned.length > 0) state.abandonedBlocks.set(stream, abandoned);
}

function translateStreamEvent(state: TranslatorState, frame: StreamEventFrame, runId: string, parts: Parts): void {
  const event = frame.event;
  const stream = frame.parent_tool_use_id ?? mainStream;
  if (event.type === 'message_start') {
    if (event.message?.id) state.currentMessageIds.set(stream, event.message.id);
    if (state.turn) noteStreamedUsage(state.turn, `${stream}:${event.message?.id ?? ''}`, event.message?.['usage']);
    state.openMessageBlocks.set(stream, new Map());
    // A new call: what an earlier one abandoned without a retry (an interrupt) is no longer reported.
    state.abandonedBlocks.delete(stream);
    return;
  }
  if (event.type === 'message_stop') {
    endMessage(state, frame, stream);
    return;
  }
  // A subagent's stops are its own; an interrupt's synthetic message_delta has a null one.
  if (event.type === 'message_delta') {
    if (!state.turn) return;
    if (stream === mainStream && event.delta?.stop_reason) state.turn.stopReason = event.delta.stop_reason;
    noteStreamedUsage(state.turn, `${stream}:${state.currentMessageIds.get(stream) ?? ''}`, event['usage']);
    return;
  }
  if (event.type !== 'content_block_delta' || !event.delta) return;
  const messageId = state.currentMessageIds.get(stream) ?? 'message';
  const blockId = `${messageId}:${event.index ?? 0}`;
  if (event.delta.type === 'text_delta' && event.delta.text) {
    state.streamedMessageIds.add(messageId);
    state.openMessageBlocks.get(stream)?.set(event.index ?? 0, blockId);
    pushText(parts, 'run.message_delta', runId, blockId, event.delta.text, frame.parent_tool_use_id);
  } else if (event.delta.type === 'thinking_delta' && event.delta.thinking) {
    state.streamedMessageIds.add(messageId);
    state.openMessageBlocks.get(stream)?.set(event.index ?? 0, blockId);
    pushText(parts, 'run.thinking_delta', runId, blockId, event.delta.thinking, frame.parent_tool_use_id);
  }
}

function translateAssistant(state: TranslatorState, frame: AssistantFrame, runId: string, parts: Parts): void {
  // Synthetic API-error text is the CLI's own wording, not the model's answer; the result classifies it.
  if (frame.is_api_error_message || frame.error) {
    if (frame.error && state.turn) state.turn.apiError = frame.error.slice(0, 60);
    const token = frame.error && assistantErrors.has(frame.error) ? frame.error : 'unknown';
    noteOnce(state, parts, `claude.assistant_error.${token}`, runId, 'warning');
    return;
  }
  // A subagent's messages live in their own transcript: only the main conversation can be cut after.
  if (!frame.parent_tool_use_id && frame.uuid && state.turn) state.turn.lastMessageId = frame.uuid;
  if (!frame.parent_tool_use_id && frame.message.stop_reason && state.turn)
    state.turn.stopReason = frame.message.stop_reason;
  const messageId = frame.message.id ?? undefined;
  const streamed = messageId !== undefined && state.streamedMessageIds.has(messageId);
  (frame.message.content ?? []).forEach((block, index) => {
    if (block.type === 'tool_use' && block.id) {
      const toolName = block.name ?? 'unknown';
      state.toolNames.set(block.id, toolName);
      if (frame.parent_tool_use_id) state.openSubagentCalls.set(block.id, frame.parent_tool_use_id);
      if (!frame.parent_tool_use_id && state.turn) state.turn.toolsRunning += 1;
      parts.push({
        type: 'run.tool_activity',
        runId,
        status: 'invoked',
        toolName,
        toolUseId: block.id,
        ...(frame.parent_tool_use_id ? { parentToolUseId: frame.parent_tool_use_id } : {}),
        ...(state.toolInputDetail === 'full' ? inputDetail(block.input) : {}),
      });
      return;
    }
    // A message that never streamed (e.g. the CLI's non-streaming retry) still reaches the host.
    if (streamed) return;
    const blockId = `${messageId ?? 'message'}:complete-${index}`;
    if (block.type === 'text' && block.text)
      pushText(parts, 'run.message_delta', runId, blockId, block.text, frame.parent_tool_use_id);
    if (block.type === 'thinking' && block.thinking)
      pushText(parts, 'run.thinking_delta', runId, blockId, block.thinking, frame.parent_tool_use_id);
  });
}

/**
 * Whether a tool's result text may enter run.tool_activity. Not under toolInputDetail none: a result
 * can repeat what the tool was given (a command's echo, a file's text). Never for AskUserQuestion:
 * its result spells out the user's answers, which the interaction's settlement already carries,
 * redacted when the host marks the question set sensitive.
 */
function resultTextShown(state: TranslatorState, toolName: string): boolean {
  return state.toolInputDetail === 'full' && toolName !== 'AskUserQuestion';
}

/**
 * Ends the calls still open inside the subagent that the failed call `parentToolUseId` started (and
 * inside theirs). An interrupt stops a subagent without a result for the call it was making (its
 * prompt withdrawn, its tool cut off): the CLI fails only the call that started the subagent, so
 * without this the host would show the inner call running for ever.
 */
function failSubagentCalls(state: TranslatorState, parentToolUseId: string, runId: string, parts: Parts): void {
  for (const [toolUseId, parent] of state.openSubagentCalls) {
    if (parent !== parentToolUseId) continue;
    state.openSubagentCalls.delete(toolUseId);
    failSubagentCalls(state, toolUseId, runId, parts);
    parts.push({
      type: 'run.tool_activity',
      runId,
      status: 'failed',
      toolName: state.toolNames.get(toolUseId) ?? 'unknown',
      toolUseId,
      parentToolUseId,
    });
  }
}

function hasToolResult(content: UserFrame['message']['content']): boolean {
  return Array.isArray(content) && content.some((block) => block.type === 'tool_result');
}

/** "[Request interrupted by user]", or "… for tool use" after a stopped call's result. */
function isInterruptionMarker(content: UserFrame['message']['content']): boolean {
  if (!Array.isArray(content)) return false;
  const last = content.at(-1);
  return last?.type === 'text' && typeof last.text === 'string' && last.text.startsWith('[Request interrupted by user');
}

function translateUser(state: TranslatorState, frame: UserFrame, runId: string, parts: Parts): void {
  const content = frame.message.content;
  // After a compaction, its summary, then (for /compact) its output: the compacted conversation's
  // last entries so far, where a copy is cut unless an answer follows. Never a tool's result: a cut
  // at one would hand its text to the next prompt.
  if (state.turn?.compacted && !frame.parent_tool_use_id && frame.uuid && !hasToolResult(content))
    state.turn.lastMessageId = frame.uuid;
  // The CLI's marker after a stopped answer: the next prompt is sent with it, so a copy cut at the
  // partial answer instead would hand the model the half answer as if it were whole.
  if (state.turn && !frame.parent_tool_use_id && frame.uuid && isInterruptionMarker(content))
    state.turn.lastMessageId = frame.uuid;
  if (!Array.isArray(content)) return;
  for (const block of content) {
    if (block.type !== 'tool_result' || !block.tool_use_id) continue;
    if (!frame.parent_tool_use_id && state.turn && state.turn.toolsRunning > 0) state.turn.toolsRunning -= 1;
    state.openSubagentCalls.delete(block.tool_use_id);
    // Only a failed call: a subagent moved to the background ends its call while its own go on.
    if (block.is_error) failSubagentCalls(state, block.tool_use_id, runId, parts);
    const toolName = state.toolNames.get(block.tool_use_id) ?? 'unknown';
    parts.push({
      type: 'run.tool_activity',
      runId,
      status: block.is_error ? 'failed' : 'succeeded',
      toolName,
      toolUseId: block.tool_use_id,
      ...(frame.parent_tool_use_id ? { parentToolUseId: frame.parent_tool_use_id } : {}),
      ...(resultTextShown(state, toolName) ? outputDetail(block.content) : {}),
    });
  }
}

function translateResult(state: TranslatorState, frame: ResultFrame, parts: Parts): void {
  const turn = state.turn;
  if (!turn) {
    noteOnce(state, parts, 'claude.result_without_run');
    return;
  }
  const startupFailure = isStartupFailure(frame);
  // A result that does not name our send (or arrives before our turn began) belongs to input we did
  // not submit; a startup failure ends everything the process was given, ours included.
  const uuids = stampsOf({ kind: 'result', frame }).uuids;
  if ((uuids.length > 0 && !uuids.includes(turn.uuid)) || (attributedRunId(state) === null && !startupFailure)) {
    noteOnce(state, parts, 'claude.result_for_other_input', turn.runId);
    return;
  }
  // Startup-failure results carry a throwaway id: only a real turn's result is followed.
  if (!startupFailure && frame.is_error !== true && frame.session_id) followSessionId(state, frame.session_id, parts);
  const usage = runUsage(state, frame);
  // Counted by the result: a run that goes on for a steered input and then ends without one counts only what streamed after.
  turn.streamedUsage = undefined;
  const anything = Object.values(usage).some((value) => (value ?? 0) > 0);
  if (anything) parts.push({ type: 'run.usage', runId: turn.runId, ...usage });
  const classified = classifyRunEnd({
    kind: 'result',
    result: frame,
    apiError: turn.apiError,
    promptBlocked: turn.promptBlocked !== undefined,
  });
  // A stop the host asked for ends the run as interrupted even when the result landed first.
  const classification = turn.interruptRequested ? { outcome: 'interrupted' as const } : classified;
  // A prompt a hook refused and the agent did not keep left the conversation as it was: nothing to cut at.
  const unchanged = startupFailure || turn.promptBlocked?.promptKept === false;
  const checkpoint = unchanged ? null : checkpointOf(state, turn, frame.local_command ?? undefined);
  if (checkpoint) parts.push(checkpoint);
  if (turn.control !== undefined) {
    parts.push({
      type: 'control.completed',
      runId: turn.runId,
      name: turn.control,
      status: classification.outcome === 'succeeded' ? 'succeeded' : 'failed',
      output: (frame.result ?? '').slice(0, 100_000),
    });
  }
  const stopReason = stopReasonOf(turn, frame, classification.outcome);
  // A call that broke off with no retry after it (every retry failed, or the answer came unstreamed): its text is not kept.
  const abandoned =
    state.abandonedBlocks.size === 0 ? [] : [...state.abandonedBlocks.values()].flat().slice(0, abandonedBlocksLimit);
  parts.push({
    type: 'run.completed',
    runId: turn.runId,
    outcome: classification.outcome,
    ...(classification.error ? { error: classification.error } : {}),
    ...(stopReason ? { stopReason } : {}),
    ...(abandoned.length > 0 ? { abandonedBlockIds: abandoned } : {}),
  });
  state.turn = null;
  // A turn's calls end with it: a retry of the next turn abandons nothing of this one.
  state.openMessageBlocks.clear();
  state.abandonedBlocks.clear();
}

/**
 * Translates one CLI frame into neutral parts. Pure apart from the explicit state it is given:
 * the same state and frames always produce the same parts (recorded transcripts test it).
 * Control frames are not handled here; the session's control channel owns them.
 */
export function translateFrame(state: TranslatorState, frame: CliFrame): Parts {
  const parts: Parts = [];
  if (applyStamps(state, stampsOf(frame))) noteOnce(state, parts, 'claude.correlation_stamped', state.turn?.runId);
  switch (frame.kind) {
    case 'system':
      translateSystem(state, frame.frame, parts);
      break;
    case 'result':
      translateResult(state, frame.frame, parts);
      break;
    case 'stream_event':
    case 'assistant':
    case 'user': {
      if (!state.turn) {
        noteOnce(state, parts, 'claude.frame_without_run');
        break;
      }
      const runId = attributedRunId(state);
      if (runId === null) {
        noteOnce(state, parts, 'claude.frame_for_other_input', state.turn.runId);
        break;
      }
      if (frame.kind === 'stream_event') translateStreamEvent(state, frame.frame, runId, parts);
      else if (frame.kind === 'assistant') translateAssistant(state, frame.frame, runId, parts);
      else translateUser(state, frame.frame, runId, parts);
      break;
    }
    case 'malformed':
      noteOnce(state, parts, `claude.malformed_${frame.type}`, state.turn?.runId);
      break;
    case 'conversation_reset':
      // /clear: the conversation starts over under a new id (followed at the next init).
      if (state.turn && attributedRunId(state) !== null) {
        state.turn.conversationReset = true;
        parts.push({ type: 'context.cleared', runId: state.turn.runId });
      }
      break;
    case 'command_lifecycle':
      // Its stamp was read above (a `started` one begins the turn).
      break;
    case 'rate_limit_event':
      // Plan limits are the session's (session/plan-limits.ts), not the run's.
      break;
    case 'unknown':
    case 'control_request':
    case 'control_response':
    case 'control_cancel_request':
      break;
  }
  return parts;
}
