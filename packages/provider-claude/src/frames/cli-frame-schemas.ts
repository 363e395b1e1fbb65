import { z } from 'zod';
import { plainResultFrame } from './result-frame-fast-path.js';
import { plainStreamEvent } from './stream-event-fast-path.js';

// Loose on purpose: the CLI adds fields between versions. Only what Tether reads is declared.

const uuidList = z.array(z.string()).nullish();

export const UsageFrame = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
});

export const SystemFrame = z.looseObject({
  type: z.literal('system'),
  subtype: z.string(),
  session_id: z.string().nullish(),
  user_message_uuids: uuidList,
  permissionMode: z.string().nullish(),
  capabilities: z.array(z.string()).nullish(),
  model: z.string().nullish(),
  tasks: z.array(z.unknown()).nullish(),
  status: z.string().nullish(),
  // api_retry (a subagent's call, should the CLI report one, names the subagent's stream)
  parent_tool_use_id: z.string().nullish(),
  attempt: z.number().nullish(),
  max_retries: z.number().nullish(),
  retry_delay_ms: z.number().nullish(),
  error_status: z.number().nullish(),
  // informational: what became of the turn's prompt (a UserPromptSubmit hook can block it)
  prompt_submit_outcome: z.looseObject({ kind: z.string(), prompt_kept: z.boolean().nullish() }).nullish(),
  // compact_boundary: what a compaction did (manual: /compact; auto: the context was filling up)
  compact_metadata: z
    .looseObject({ trigger: z.string().nullish(), pre_tokens: z.number().nullish(), post_tokens: z.number().nullish() })
    .nullish(),
});
export type SystemFrame = z.infer<typeof SystemFrame>;

export const StreamEventFrame = z.looseObject({
  type: z.literal('stream_event'),
  parent_tool_use_id: z.string().nullish(),
  user_message_uuid: z.string().nullish(),
  user_message_uuids: uuidList,
  // On the synthetic message_stop of a call that broke off: the blocks, from this index on, the CLI does not keep.
  abandoned_blocks: z
    .looseObject({ api_message_id: z.string().nullish(), from_block_index: z.number().nullish() })
    .nullish(),
  event: z.looseObject({
    type: z.string(),
    index: z.number().nullish(),
    message: z.looseObject({ id: z.string().nullish() }).nullish(),
    content_block: z.looseObject({ type: z.string() }).nullish(),
    // message_delta's delta has no type (it carries stop_reason); content deltas do.
    delta: z
      .looseObject({
        type: z.string().nullish(),
        text: z.string().nullish(),
        thinking: z.string().nullish(),
        stop_reason: z.string().nullish(),
      })
      .nullish(),
  }),
});
export type StreamEventFrame = z.infer<typeof StreamEventFrame>;

export const ContentBlock = z.looseObject({
  type: z.string(),
  id: z.string().nullish(),
  name: z.string().nullish(),
  text: z.string().nullish(),
  thinking: z.string().nullish(),
  tool_use_id: z.string().nullish(),
  is_error: z.boolean().nullish(),
  // Unknown on purpose: a tool_use's input and a tool_result's content are read defensively, never refused.
  input: z.unknown().optional(),
  content: z.unknown().optional(),
});
export type ContentBlock = z.infer<typeof ContentBlock>;

export const AssistantFrame = z.looseObject({
  type: z.literal('assistant'),
  /** The transcript entry's id: what --resume-session-at accepts to cut the conversation after it. */
  uuid: z.string().nullish(),
  parent_tool_use_id: z.string().nullish(),
  user_message_uuid: z.string().nullish(),
  user_message_uuids: uuidList,
  error: z.string().nullish(),
  is_api_error_message: z.boolean().nullish(),
  message: z.looseObject({
    id: z.string().nullish(),
    content: z.array(ContentBlock).nullish(),
    /** null while the message streams (the stream's message_delta carries it); set on a non-streamed one. */
    stop_reason: z.string().nullish(),
  }),
});
export type AssistantFrame = z.infer<typeof AssistantFrame>;

export const UserFrame = z.looseObject({
  type: z.literal('user'),
  parent_tool_use_id: z.string().nullish(),
  /** The entry's id in the CLI's transcript (a copy of the conversation can be cut after it). */
  uuid: z.string().nullish(),
  message: z.looseObject({
    content: z.union([z.string(), z.array(ContentBlock)]).nullish(),
  }),
});
export type UserFrame = z.infer<typeof UserFrame>;

export const ResultFrame = z.looseObject({
  type: z.literal('result'),
  subtype: z.string(),
  is_error: z.boolean().nullish(),
  session_id: z.string().nullish(),
  terminal_reason: z.string().nullish(),
  api_error_status: z.number().nullish(),
  total_cost_usd: z.number().nullish(),
  usage: UsageFrame.nullish(),
  model_usage_since_last_result: z.record(z.string(), z.looseObject({ costUSD: z.number().nullish() })).nullish(),
  errors: z.array(z.string()).nullish(),
  startup_failure_reason: z.string().nullish(),
  num_turns: z.number().nullish(),
  /** The stop reason of the turn's last message, synthetic ones included (an API error's reads stop_sequence). */
  stop_reason: z.string().nullish(),
  result: z.string().nullish(),
  /** The slash command the CLI ran itself in this turn (compact, clear, cost...), typed or sent as a control. */
  local_command: z.string().nullish(),
  user_message_uuid: z.string().nullish(),
  user_message_uuids: uuidList,
});
export type ResultFrame = z.infer<typeof ResultFrame>;

export const ConversationResetFrame = z.looseObject({
  type: z.literal('conversation_reset'),
  new_conversation_id: z.string().nullish(),
  user_message_uuid: z.string().nullish(),
});
export type ConversationResetFrame = z.infer<typeof ConversationResetFrame>;

export const CommandLifecycleFrame = z.looseObject({
  type: z.literal('command_lifecycle'),
  command_uuid: z.string(),
  state: z.string(),
});
export type CommandLifecycleFrame = z.infer<typeof CommandLifecycleFrame>;

/** The account's plan limits changed (subscription accounts; SDKRateLimitEvent). */
export const RateLimitEventFrame = z.looseObject({
  type: z.literal('rate_limit_event'),
  rate_limit_info: z.unknown().optional(),
});
export type RateLimitEventFrame = z.infer<typeof RateLimitEventFrame>;

export const ControlRequestFrame = z.looseObject({
  type: z.literal('control_request'),
  request_id: z.string(),
  request: z.looseObject({ subtype: z.string() }),
});
export type ControlRequestFrame = z.infer<typeof ControlRequestFrame>;

export const ControlResponseFrame = z.looseObject({
  type: z.literal('control_response'),
  response: z.looseObject({
    subtype: z.string(),
    request_id: z.string(),
    response: z.unknown().optional(),
    error: z.string().nullish(),
    error_code: z.string().nullish(),
  }),
});
export type ControlResponseFrame = z.infer<typeof ControlResponseFrame>;

export const ControlCancelRequestFrame = z.looseObject({
  type: z.literal('control_cancel_request'),
  request_id: z.string(),
});
export type ControlCancelRequestFrame = z.infer<typeof ControlCancelRequestFrame>;

export type CliFrame =
  | { readonly kind: 'system'; readonly frame: SystemFrame }
  | { readonly kind: 'stream_event'; readonly frame: StreamEventFrame }
  | { readonly kind: 'assistant'; readonly frame: AssistantFrame }
  | { readonly kind: 'user'; readonly frame: UserFrame }
  | { readonly kind: 'result'; readonly frame: ResultFrame }
  | { readonly kind: 'command_lifecycle'; readonly frame: CommandLifecycleFrame }
  | { readonly kind: 'conversation_reset'; readonly frame: ConversationResetFrame }
  | { readonly kind: 'rate_limit_event'; readonly frame: RateLimitEventFrame }
  | { readonly kind: 'control_request'; readonly frame: ControlRequestFrame }
  | { readonly kind: 'control_response'; readonly frame: ControlResponseFrame }
  | { readonly kind: 'control_cancel_request'; readonly frame: ControlCancelRequestFrame }
  | { readonly kind: 'unknown'; readonly type: string }
  | { readonly kind: 'malformed'; readonly type: string };

const schemas = {
  system: SystemFrame,
  stream_event: StreamEventFrame,
  assistant: AssistantFrame,
  user: UserFrame,
  result: ResultFrame,
  command_lifecycle: CommandLifecycleFrame,
  conversation_reset: ConversationResetFrame,
  rate_limit_event: RateLimitEventFrame,
  control_request: ControlRequestFrame,
  control_response: ControlResponseFrame,
  control_cancel_request: ControlCancelRequestFrame,
} as const;

/** Classifies one parsed stdout value. Unknown types are reported, never thrown. */
export function parseCliFrame(value: unknown): CliFrame {
  const type =
    typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string'
      ? (value as { type: string }).type
      : '';
  if (!Object.hasOwn(schemas, type)) return { kind: 'unknown', type: type.slice(0, 60) };
  if (type === 'stream_event') {
    const frame = plainStreamEvent(value as Record<string, unknown>);
    if (frame) return { kind: 'stream_event', frame };
  } else if (type === 'result') {
    const frame = plainResultFrame(value as Record<string, unknown>);
    if (frame) return { kind: 'result', frame };
  }
  const kind = type as keyof typeof schemas;
  // Not compiled (jitless): past the stream_event shortcut, frames of a type are few per turn, and
  // compiling each schema on its first parse delayed the first turn's output.
  const parsed = schemas[kind].safeParse(value, { jitless: true });
  if (!parsed.success) return { kind: 'malformed', type: kind };
  return { kind, frame: parsed.data } as CliFrame;
}
