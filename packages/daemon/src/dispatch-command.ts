import { commandTypes } from '@tether/protocol';
import { daemonStopping } from './errors/error-response.js';
import type { DaemonState } from './daemon-state.js';

/**
 * The one way a command enters the daemon, whichever transport brought it (POST /v1/commands or a
 * WebSocket `command` frame): both import it from here, neither from the other.
 */

// A turn may carry 100 parts of up to 1,000,000 characters; this bounds what one command can make the daemon hold.
export const maxCommandBytes = 64 * 1024 * 1024;

/** Commands that start new work, refused while the daemon drains (answers, interrupts and closes still go through). */
const startsWork = new Set<string>(['open_session', 'submit_turn', 'run_control']);

/** The command's type when it is a known one (so the log never carries arbitrary client text). */
export function knownCommandType(body: unknown): string | undefined {
  const type = typeof body === 'object' && body !== null ? (body as { type?: unknown }).type : undefined;
  return typeof type === 'string' && (commandTypes as readonly string[]).includes(type) ? type : undefined;
}

/** Refuses new work while draining, else hands the command to the runtime. */
export async function dispatchCommand(state: DaemonState, body: unknown) {
  const type = knownCommandType(body);
  if (state.draining && type !== undefined && startsWork.has(type)) throw daemonStopping();
  return state.runtime.dispatch(body);
}
