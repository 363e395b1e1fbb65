import { AgentError, type ContextUsage, type PermissionMode } from '@tether/protocol';
import type { ClaudeConnection } from '../connection/claude-connection.js';
import { cliPermissionModes, toNeutralPermissionMode } from '../launch/permission-modes.js';
import { toContextUsage } from './context-usage.js';

/** The typed controls as requests over a running agent, their answers as neutral values. */

export function requiresRestart(mode: PermissionMode): AgentError {
  return new AgentError({
    code: 'requires_restart',
    message: 'The running claude CLI cannot enter bypass mode; it must be started in it.',
    details: { reason: mode },
  });
}

/** The mode now in effect (the agent's own answer where it gives one). */
export async function requestPermissionMode(
  connection: ClaudeConnection,
  mode: PermissionMode,
): Promise<PermissionMode> {
  let response: unknown;
  try {
    response = await connection.request({ subtype: 'set_permission_mode', mode: cliPermissionModes[mode] });
  } catch (error) {
    if (AgentError.isInstance(error) && error.details?.reason === 'bypass_not_launched') throw requiresRestart(mode);
    throw error;
  }
  const reported = (response as { mode?: unknown } | undefined)?.mode;
  return (typeof reported === 'string' ? toNeutralPermissionMode(reported) : undefined) ?? mode;
}

/** The model now in effect, an alias resolved where the agent says what it resolved to. */
export async function requestModel(connection: ClaudeConnection, model: string): Promise<string> {
  const response = (await connection.request({ subtype: 'set_model', model: model === 'default' ? null : model })) as
    | { model?: unknown }
    | undefined;
  return typeof response?.model === 'string' ? response.model : model;
}

export async function requestContextUsage(connection: ClaudeConnection): Promise<ContextUsage> {
  return toContextUsage(
    (await connection.request({ subtype: 'get_context_usage' })) as Record<string, unknown> | undefined,
  );
}

export async function requestSessionCost(connection: ClaudeConnection): Promise<{ report: string }> {
  const response = (await connection.request({ subtype: 'get_session_cost' })) as { text?: unknown } | undefined;
  return { report: typeof response?.text === 'string' ? response.text : '' };
}
