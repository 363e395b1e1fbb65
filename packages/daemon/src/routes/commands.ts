import { type Hono } from 'hono';
import { AgentError, commandTypes } from '@tether/protocol';
import { daemonStopping } from '../errors/error-response.js';
import type { DaemonEnvironment, DaemonState } from '../http/daemon-state.js';
import { readJsonBody } from '../http/read-json-body.js';

// A turn may carry 100 parts of up to 1,000,000 characters; this bounds what one request can make the daemon hold.
export const maxCommandBytes = 64 * 1024 * 1024;

/** Commands that start new work, refused while the daemon drains (answers, interrupts and closes still go through). */
const startsWork = new Set<string>(['open_session', 'submit_turn', 'run_control']);

/** The command's type when it is a known one (so the log never carries arbitrary client text). */
export function knownCommandType(body: unknown): string | undefined {
  const type = typeof body === 'object' && body !== null ? (body as { type?: unknown }).type : undefined;
  return typeof type === 'string' && (commandTypes as readonly string[]).includes(type) ? type : undefined;
}

/** The one dispatch path of HTTP and WebSocket: refuses new work while draining, else hands the command to the runtime. */
export async function dispatchCommand(state: DaemonState, body: unknown) {
  const type = knownCommandType(body);
  if (state.draining && type !== undefined && startsWork.has(type)) throw daemonStopping();
  return state.runtime.dispatch(body);
}

export function registerCommandRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  app.post('/v1/commands', async (context) => {
      const body = await readJsonBody(context.env.incoming, maxCommandBytes).catch((error: unknown) => {
        // The rest of an oversized body is never read, so this connection cannot carry another request.
        if (AgentError.isInstance(error) && error.code === 'payload_too_large') context.header('Connection', 'close');
        throw error;
      });
      const type = knownCommandType(body);
      if (type) context.set('commandType', type);
      const sessionId = typeof body === 'object' && body !== null ? (body as { sessionId?: unknown }).sessionId : undefined;
      if (typeof sessionId === 'string' && /^ses_[a-z0-9]{32}$/.test(sessionId)) context.set('sessionId', sessionId);
      const receipt = await dispatchCommand(state, body);
      context.set('sessionId', receipt.sessionId);
      return context.json(receipt, 200);
  });
}
