import { AgentError } from '@tether/protocol';
import type { ClaudeConnection } from '../connection/claude-connection.js';

const refusals = {
  run_not_active: 'That run is not the one in progress, so nothing was sent. Submit the message as a new turn.',
  control_run:
    'The run in progress is a control (a slash command), which takes no follow-up. Send it after the control ends.',
  run_ending:
    'The run in progress is being stopped, so nothing was sent. Send the message as a new turn once it ended.',
  agent_not_reading: 'The claude CLI no longer reads its input, so nothing was sent. Send the message as a new turn.',
} as const;

/** Why doSteer sent nothing (the runtime reports it as the input's agent_refused cancellation). */
export function steerRefused(reason: keyof typeof refusals): AgentError {
  return new AgentError({ code: 'provider_rejected', message: refusals[reason], details: { reason } });
}

/**
 * Asks the agent to drop a steered user line it has not taken yet (cancel_async_message): true when
 * it did; false when it had already taken it into the turn (its lifecycle `started` follows or came).
 */
export async function withdrawSteer(connection: ClaudeConnection, uuid: string): Promise<boolean> {
  const answer = (await connection.request({ subtype: 'cancel_async_message', message_uuid: uuid })) as
    | { cancelled?: unknown }
    | undefined;
  return answer?.cancelled === true;
}
