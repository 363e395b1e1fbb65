import { commandTypes, imageLimits } from '@tether/protocol';
import { daemonStopping } from './errors/error-response.js';
import type { DaemonState } from './daemon-state.js';

/**
 * The one way a command enters the daemon, whichever transport brought it (POST /v1/commands or a
 * WebSocket `command` frame): both import it from here, neither from the other.
 */

/** Characters of base64 that carry `bytes` bytes. */
const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

/**
 * What one command can make the daemon hold: a turn's images at their limit together, base64 in
 * JSON (32 MiB), plus as much again for its text parts and the JSON around them (64 MiB in all).
 * Past it: payload_too_large (413). Only commands carry a body this large; no other route reads one.
 */
export const maxCommandBytes = 2 * base64Length(imageLimits.maxTotalBytes);

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
