import type { ConnectionListener } from '../connection/claude-connection.js';
import type { CliFrame } from '../frames/cli-frame-schemas.js';
import type { AgentSdkPermissionResult, AgentSdkPromptOptions } from './agent-sdk-types.js';
import type { PositionMarker } from './prompt-positions.js';

interface PromptRecord {
  readonly requestId: string;
  readonly toolUseId: string;
  readonly request: Record<string, unknown>;
  readonly signal: AbortSignal;
  readonly resolve: (result: AgentSdkPermissionResult) => void;
  readonly onAbort: () => void;
  /** The canUseTool promise has its answer (given, denied, or withdrawn). */
  settled: boolean;
  /** The listener was told (interaction raised or denied by policy). */
  raised: boolean;
  /** The SDK aborted the signal: the CLI took the prompt back. */
  aborted: boolean;
}

const withdrawnMessage = 'The request was withdrawn before it was answered.';
/** Remembered ids (markers reached first, tool uses seen): a bound, since old ones are long answered. */
const remembered = 1_000;

function remember(set: Set<string>, id: string): void {
  set.add(id);
  if (set.size > remembered) set.delete(set.values().next().value!);
}

/** The can_use_tool request the CLI sent, rebuilt from the fields the SDK renamed for canUseTool. */
function toRequest(
  toolName: string,
  input: Record<string, unknown>,
  options: AgentSdkPromptOptions,
): Record<string, unknown> {
  const fields: [string, unknown][] = [
    ['permission_suggestions', options.suggestions],
    ['blocked_path', options.blockedPath],
    ['decision_reason', options.decisionReason],
    ['title', options.title],
    ['display_name', options.displayName],
    ['description', options.description],
    ['default_to_no', options.defaultToNo],
    ['suppress_always_allow_rule', options.suppressAlwaysAllowRule],
  ];
  return {
    subtype: 'can_use_tool',
    tool_name: toolName,
    input,
    tool_use_id: options.toolUseID,
    ...Object.fromEntries(fields.filter(([, value]) => value !== undefined)),
  };
}

/**
 * The SDK's canUseTool callback turned into the prompt path the cli transport has: each call is
 * raised once (ToolPrompts makes it an interaction or denies it), answered once, and withdrawn
 * when the SDK aborts its signal (the CLI's control_cancel_request): the call is denied at once and
 * its abort listener detached. A call whose signal is already aborted on arrival raises nothing.
 *
 * Order: with position markers (prompt-positions.ts) a prompt is raised, and a withdrawal reported,
 * exactly where the control line stood among the frames. Without them (an injected query) a
 * prompt waits for its tool_use frame, which the CLI always writes first, or the next macrotask.
 */
export class SdkPromptBridge {
  private readonly listener: () => ConnectionListener;
  private readonly records = new Map<string, PromptRecord>();
  private readonly promptsReached = new Set<string>();
  private readonly withdrawalsReached = new Set<string>();
  private readonly seenToolUses = new Set<string>();
  private markers = false;
  private closedWith: string | null = null;
  private fallbackId = 0;

  constructor(listener: () => ConnectionListener) {
    this.listener = listener;
  }

  /** From now on the copy of the CLI's stdout carries position markers (the connection spawned the CLI). */
  usePositionMarkers(): void {
    this.markers = true;
  }

  /** The canUseTool callback. */
  ask(
    toolName: string,
    input: Record<string, unknown>,
    options: AgentSdkPromptOptions,
  ): Promise<AgentSdkPermissionResult> {
    if (this.closedWith !== null) return Promise.resolve({ behavior: 'deny', message: this.closedWith });
    if (options.signal.aborted) return Promise.resolve({ behavior: 'deny', message: withdrawnMessage });
    this.fallbackId += 1;
    const requestId = options.requestId ?? `sdk-prompt-${this.fallbackId}`;
    return new Promise((resolve) => {
      const record: PromptRecord = {
        requestId,
        toolUseId: options.toolUseID,
        request: toRequest(toolName, input, options),
        signal: options.signal,
        resolve,
        onAbort: () => this.abort(record),
        settled: false,
        raised: false,
        aborted: false,
      };
      this.records.set(requestId, record);
      options.signal.addEventListener('abort', record.onAbort, { once: true });
      if (this.markers) {
        if (this.promptsReached.delete(requestId)) this.raise(record);
      } else if (this.seenToolUses.has(record.toolUseId)) this.raise(record);
      else setImmediate(() => this.raise(record));
    });
  }

  /** Our reader reached a marker: the prompt or withdrawal it stands for happens now, in stream order. */
  onMarker(marker: PositionMarker): void {
    const record = this.records.get(marker.requestId);
    if (marker.event === 'prompt') {
      if (record) this.raise(record);
      else remember(this.promptsReached, marker.requestId);
    } else if (record?.aborted) this.reportWithdrawal(record);
    else remember(this.withdrawalsReached, marker.requestId);
  }

  /** A frame went to the listener (without markers): prompts waiting for its tool_use blocks are raised now. */
  afterFrame(frame: CliFrame): void {
    if (this.markers || frame.kind !== 'assistant') return;
    for (const block of frame.frame.message.content ?? []) {
      if (block.type !== 'tool_use' || !block.id) continue;
      remember(this.seenToolUses, block.id);
      for (const record of this.records.values()) if (record.toolUseId === block.id) this.raise(record);
    }
  }

  /** Delivers an answer; false when no call with that id waits (answered, withdrawn and reported, closed). */
  answer(requestId: string, response: Record<string, unknown>): boolean {
    const record = this.records.get(requestId);
    if (!record) return false;
    // Taken back but not yet reported: the answer is moot, as the CLI ignores one to a cancelled prompt.
    if (record.aborted) return true;
    this.records.delete(requestId);
    this.settle(record, response as AgentSdkPermissionResult);
    return true;
  }

  /** Denies every call still waiting and any that arrives later (the connection ended). */
  close(message: string): void {
    this.closedWith = message;
    for (const record of this.records.values()) this.settle(record, { behavior: 'deny', message });
    this.records.clear();
  }

  private raise(record: PromptRecord): void {
    if (record.raised || this.records.get(record.requestId) !== record) return;
    // Without markers a prompt taken back before it could be raised raises nothing.
    if (record.aborted && !this.markers) return;
    record.raised = true;
    this.listener().onPrompt(record.requestId, record.request);
  }

  private abort(record: PromptRecord): void {
    record.aborted = true;
    this.settle(record, { behavior: 'deny', message: withdrawnMessage });
    if (!this.markers || this.withdrawalsReached.delete(record.requestId)) this.reportWithdrawal(record);
    // Otherwise reported at its withdrawal marker (and raised first at its prompt marker, if not yet).
  }

  private reportWithdrawal(record: PromptRecord): void {
    if (this.records.get(record.requestId) !== record) return;
    this.records.delete(record.requestId);
    if (record.raised) this.listener().onPromptWithdrawn(record.requestId);
  }

  private settle(record: PromptRecord, result: AgentSdkPermissionResult): void {
    if (record.settled) return;
    record.settled = true;
    record.signal.removeEventListener('abort', record.onAbort);
    record.resolve(result);
  }
}
