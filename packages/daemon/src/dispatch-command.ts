import { AgentError, commandTypes, imageLimits } from '@tether/protocol';
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

/**
 * What still goes through while the daemon drains: what ends or settles work already there. Every
 * other command may start some (a session, a run, an agent process to fork, rewind files, restart
 * in a mode or answer a query), which the shutdown would only cut off.
 */
const endsWork = new Set<string>(['respond_interaction', 'interrupt_run', 'cancel_queued_input', 'close_session']);

/** The command's type when it is a known one (so the log never carries arbitrary client text). */
export function knownCommandType(body: unknown): string | undefined {
  const type = typeof body === 'object' && body !== null ? (body as { type?: unknown }).type : undefined;
  return typeof type === 'string' && (commandTypes as readonly string[]).includes(type) ? type : undefined;
}

/** Refuses what may start work while draining, else hands the command to the runtime. */
export async function dispatchCommand(state: DaemonState, body: unknown) {
  const type = knownCommandType(body);
  if (state.draining && type !== undefined && !endsWork.has(type)) throw daemonStopping();
  try {
    return await state.runtime.dispatch(body);
  } catch (error) {
    // Past the drain, the runtime itself has stopped: its words are for an in-process host ("create
    // a new runtime"), which a daemon's client cannot do.
    if (
      state.draining &&
      AgentError.isInstance(error) &&
      error.code === 'runtime_stopped' &&
      error.details?.reason === undefined
    )
      throw daemonStopping();
    throw error;
  }
}
