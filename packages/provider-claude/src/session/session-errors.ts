import { statSync } from 'node:fs';
import { AgentError, type SerializedAgentError } from '@tether/protocol';

/** What the agent is told when a session closes with its prompts still open. */
export const closingMessage = 'The session is closing, so this request was not permitted.';

export function turnActive(): AgentError {
  return new AgentError({ code: 'run_active', message: 'The claude CLI is still working on the previous turn.' });
}

export function sessionClosed(): AgentError {
  return new AgentError({
    code: 'session_closed',
    message: "This session's agent process was stopped. Reopen the session to continue.",
  });
}

function duration(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`;
}

/**
 * How a run stopped by a watchdog ends, whatever the agent reports for it. startup: the agent wrote
 * no frame at all after it was started; api: the agent waited on the model API with nothing to show.
 */
export function stalledError(phase: 'startup' | 'api', timeoutMs: number, agentStopped = false): SerializedAgentError {
  if (phase === 'api' && agentStopped) {
    // The API may be fine: what sent nothing was the CLI itself, held by a stop signal.
    return new AgentError({
      code: 'provider_stalled',
      message: `The claude CLI process was stopped (a SIGSTOP, a debugger, a job stopped in a shell) and sent nothing for ${duration(timeoutMs)}, so the run was ended. Retry the turn: the next one starts a new process that resumes the conversation.`,
      details: { reason: 'agent_stopped', phase },
    }).toObject();
  }
  if (phase === 'startup') {
    return new AgentError({
      code: 'provider_stalled',
      message: `The claude CLI wrote nothing for ${duration(timeoutMs)} after it was started, so it was stopped. Check that \`claude\` starts on its own in this workspace (MCP servers that do not answer, a login prompt), then retry; if it only needs longer, raise startupTimeoutMs (tether run --startup-timeout).`,
      details: { reason: 'no_first_frame', phase },
    }).toObject();
  }
  return new AgentError({
    code: 'provider_stalled',
    message: `The model API sent nothing for ${duration(timeoutMs)}, so the run was stopped. Retry the turn; if it keeps happening, check the API (ANTHROPIC_BASE_URL) and the network.`,
    details: { reason: 'no_frames', phase },
  }).toObject();
}

/** How a run ends when the agent's frames never name its input under the default (stamped) correlation. */
export function unstampedError(): SerializedAgentError {
  return new AgentError({
    code: 'provider_contract_violation',
    message:
      "The claude CLI does not stamp its output with the input it belongs to, so Tether cannot tell which turn its frames belong to. Update the CLI (`claude update`, or npm install -g @anthropic-ai/claude-code@latest), or set the provider's correlation to 'legacy-unstamped'.",
    details: { reason: 'frames_unstamped' },
  }).toObject();
}

/** How a run ends when its agent stopped reading its input while the run needed to reach it. */
export function inputClosedError(): SerializedAgentError {
  return new AgentError({
    code: 'provider_crashed',
    message:
      'The claude CLI stopped reading its input (its stdin closed), so an answer could not reach it and it was stopped. Retry the turn: the next one starts a new process that resumes the conversation.',
    details: { reason: 'stdin_closed' },
  }).toObject();
}

/**
 * The session's folder is gone (moved, renamed or deleted since the session was opened): the agent
 * cannot start in it, and spawn's ENOENT would read as a missing claude binary. Null when it is there.
 */
export function missingWorkspace(folder: string): AgentError | null {
  // Synchronous, as the launch it guards: one stat per agent started, with nothing to wait for between.
  let isFolder: boolean;
  try {
    isFolder = statSync(folder, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    isFolder = false; // Unreadable on the way there (EACCES): no agent can start in it either.
  }
  if (isFolder) return null;
  return new AgentError({
    code: 'invalid_workspace',
    message: `The session's workspace folder ${folder} is gone (moved, renamed or deleted), so the agent cannot work in it. Put the folder back and send the turn again; a worktree session's folder is made again from its branch when the session is reopened (close it, then resume it).`,
    details: { reason: 'missing' },
  });
}
