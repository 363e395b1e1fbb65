import type { Hono } from 'hono';
import { AgentError } from '@tether/protocol';
import { dispatchCommand, knownCommandType, maxCommandBytes } from '../dispatch-command.js';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import { readJsonBody } from '../http/read-json-body.js';

export function registerCommandRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  app.post('/v1/commands', async (context) => {
    const body = await readJsonBody(context.env.incoming, maxCommandBytes).catch((error: unknown) => {
      // The rest of an oversized body is dropped, and how much of it came is not sure: the connection carries no other request.
      if (AgentError.isInstance(error) && error.code === 'payload_too_large') context.header('Connection', 'close');
      throw error;
    });
    const type = knownCommandType(body);
    if (type) context.set('commandType', type);
    const sessionId =
      typeof body === 'object' && body !== null ? (body as { sessionId?: unknown }).sessionId : undefined;
    if (typeof sessionId === 'string' && /^ses_[a-z0-9]{32}$/.test(sessionId)) context.set('sessionId', sessionId);
    const receipt = await dispatchCommand(state, body);
    context.set('sessionId', receipt.sessionId);
    return context.json(receipt, 200);
  });
}
