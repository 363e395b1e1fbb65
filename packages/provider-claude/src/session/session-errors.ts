import { AgentError, type SerializedAgentError } from '@tether/protocol';

/** What the agent is told when a session closes with its prompts still open. */
export const closingMessage = 'The session is closing, so this request was not permitted.';

export function sessionClosed(): AgentError {
  return new AgentError({ code: 'session_closed', message: 'This session\'s agent process was stopped. Reopen the session to continue.' });
}

/** How a run stopped by the stall watchdog ends, whatever the agent reports for it. */
export function stalledError(stallTimeoutMs: number): SerializedAgentError {
  return new AgentError({
    code: 'provider_stalled',
    message: `The model API sent nothing for ${stallTimeoutMs >= 1000 ? `${Math.round(stallTimeoutMs / 1000)} s` : `${stallTimeoutMs} ms`}, so the run was stopped. Retry the turn; if it keeps happening, check the API (ANTHROPIC_BASE_URL) and the network.`,
    details: { reason: 'no_frames' },
  }).toObject();
}
