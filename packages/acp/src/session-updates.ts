import { pathToFileURL } from 'node:url';
import path from 'node:path';
import type { PlanEntry, SessionUpdate, ToolCallContent } from '@agentclientprotocol/sdk';
import type { EventOfType, ProtocolEvent } from '@tether/protocol';
import { unwrappedResource } from './prompt-input.js';
import { describeToolCall } from './tool-call-description.js';

export interface UpdateOptions {
  /**
   * Show a turn's input as user_message_chunk: on a replay, and for a turn another host started
   * (the client shows the prompts it sent itself).
   */
  readonly showInput: boolean;
  /** The session's directory: recorded file parts are relative to it. */
  readonly directory: string;
  /** Runs whose answer already streamed (a control's output then repeats it). */
  readonly answeredRuns: ReadonlySet<string>;
  /**
   * The mode the client last heard of: the same mode again (a change a command made, recorded once
   * from the agent and once from the command) is not repeated.
   */
  readonly announcedMode?: string | undefined;
}

/** Sent after the text of a model call that broke off mid-answer (run.retrying abandonedBlockIds). */
export const abandonedTextNote =
  '\n\n(The connection to the model dropped: the text above was cut off and is not part of the answer, which follows in full.)\n\n';

/**
 * Sent when the agent begins a turn by itself (a background task it ran finished): no prompt of the
 * client's stands before its answer, which would otherwise run on from the previous one.
 */
export const agentTurnNote = '\n\n(A background task the agent ran finished; it answers by itself.)\n\n';

/** Sent when a run ends after a model call that broke off with no retry after it (run.completed abandonedBlockIds). */
export const abandonedEndNote =
  '\n\n(The connection to the model dropped: the text above was cut off and is not part of an answer.)\n\n';

/** The tools whose completion must keep the diff the call showed (their result text says only "updated"). */
const editTools = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);

function text(value: string): { type: 'text'; text: string } {
  return { type: 'text', text: value };
}

function inputUpdates(event: EventOfType<'run.started'>, directory: string): SessionUpdate[] {
  if (event.control) return [{ sessionUpdate: 'user_message_chunk', content: text(`/${event.control.name}`) }];
  return (event.input ?? []).flatMap((part): SessionUpdate[] => {
    switch (part.type) {
      case 'text': {
        // An embedded resource reached the agent wrapped in tags: the client is shown the resource it sent.
        const resource = unwrappedResource(part.text);
        if (resource) return [{ sessionUpdate: 'user_message_chunk', content: { type: 'resource', resource } }];
        return [{ sessionUpdate: 'user_message_chunk', content: text(part.text) }];
      }
      case 'file': {
        const absolute = path.resolve(directory, part.path);
        const link = { type: 'resource_link' as const, name: part.path, uri: pathToFileURL(absolute).href };
        return [{ sessionUpdate: 'user_message_chunk', content: link }];
      }
      default:
        // An image is recorded by reference only; its bytes are a blob read, not part of a replay.
        return [];
    }
  });
}

/** The model's todo list (TodoWrite's input) as an ACP plan. */
export function planOf(input: Readonly<Record<string, unknown>> | undefined): PlanEntry[] | null {
  if (!input || !Array.isArray(input.todos)) return null;
  return input.todos.flatMap((todo: unknown): PlanEntry[] => {
    const { content, status } = (todo ?? {}) as Record<string, unknown>;
    if (typeof content !== 'string') return [];
    const known = status === 'in_progress' || status === 'completed' ? status : 'pending';
    return [{ content, status: known, priority: 'medium' }];
  });
}

function toolUpdates(event: EventOfType<'run.tool_activity'>): SessionUpdate[] {
  if (event.toolName === 'TodoWrite') {
    // The plan replaces the tool call: what the client shows of a todo list is the plan itself.
    const entries = event.status === 'invoked' ? planOf(event.input) : null;
    return entries ? [{ sessionUpdate: 'plan', entries }] : [];
  }
  if (event.status === 'invoked') {
    const description = describeToolCall(event.toolName, event.input);
    return [
      {
        sessionUpdate: 'tool_call',
        toolCallId: event.toolUseId,
        name: event.toolName,
        title: description.title,
        kind: description.kind,
        status: 'pending',
        locations: description.locations,
        content: description.content,
        ...(event.input ? { rawInput: event.input } : {}),
      },
    ];
  }
  const keepsContent = event.status === 'succeeded' && editTools.has(event.toolName);
  const content: ToolCallContent[] | undefined =
    event.output && !keepsContent ? [{ type: 'content', content: text(event.output) }] : undefined;
  return [
    {
      sessionUpdate: 'tool_call_update',
      toolCallId: event.toolUseId,
      status: event.status === 'succeeded' ? 'completed' : 'failed',
      ...(content ? { content } : {}),
    },
  ];
}

/**
 * The session/update notifications one Tether event becomes (none for most bookkeeping events).
 * Output of a subagent (a Task tool's own conversation) stays inside its tool call.
 */
export function updatesForEvent(event: ProtocolEvent, options: UpdateOptions): SessionUpdate[] {
  switch (event.type) {
    case 'run.started':
      if (event.startedBy === 'agent') return [{ sessionUpdate: 'agent_message_chunk', content: text(agentTurnNote) }];
      return options.showInput ? inputUpdates(event, options.directory) : [];
    case 'run.message_delta':
      return event.parentToolUseId ? [] : [{ sessionUpdate: 'agent_message_chunk', content: text(event.text) }];
    case 'run.thinking_delta':
      return event.parentToolUseId ? [] : [{ sessionUpdate: 'agent_thought_chunk', content: text(event.text) }];
    case 'run.retrying':
      // A chunk cannot be taken back: what the failed call streamed stays shown, and this says it was cut off.
      return event.abandonedBlockIds === undefined
        ? []
        : [{ sessionUpdate: 'agent_message_chunk', content: text(abandonedTextNote) }];
    case 'run.completed':
      return event.abandonedBlockIds === undefined
        ? []
        : [{ sessionUpdate: 'agent_message_chunk', content: text(abandonedEndNote) }];
    case 'run.tool_activity':
      return toolUpdates(event);
    case 'control.completed':
      return event.output.trim() === '' || options.answeredRuns.has(event.runId)
        ? []
        : [{ sessionUpdate: 'agent_message_chunk', content: text(event.output) }];
    case 'session.mode_changed':
      return event.mode === options.announcedMode
        ? []
        : [{ sessionUpdate: 'current_mode_update', currentModeId: event.mode }];
    default:
      return [];
  }
}
