import type { EventBodyOfType } from '@tether/protocol';

/**
 * What a provider session reports, in order: the bodies of protocol events the runtime stamps
 * with the session's sequence before it stores and publishes them.
 */
export type AgentProviderV1Part = EventBodyOfType<
  | 'run.queued'
  | 'run.checkpointed'
  | 'run.message_delta'
  | 'run.thinking_delta'
  | 'run.retrying'
  | 'run.tool_activity'
  | 'run.usage'
  | 'run.completed'
  | 'session.provider_session_changed'
  | 'session.mode_changed'
  | 'session.model_changed'
  | 'session.process_started'
  | 'session.process_stopped'
  | 'control.completed'
  | 'context.cleared'
  | 'context.compacted'
  | 'interaction.requested'
  | 'interaction.withdrawn'
  | 'diagnostic'
  | 'input.folded'
  | 'input.cancelled'
  | 'session.limits_changed'
  | 'session.context_measured'
>;

export type AgentProviderV1PartType = AgentProviderV1Part['type'];
