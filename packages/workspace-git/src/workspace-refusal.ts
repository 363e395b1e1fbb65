import { AgentError } from '@tether/protocol';

/** A git_worktree workspace that cannot be prepared or used: invalid_workspace, with a reason a host can branch on. */
export function workspaceRefusal(reason: string, message: string): AgentError {
  return new AgentError({ code: 'invalid_workspace', message, details: { reason } });
}
