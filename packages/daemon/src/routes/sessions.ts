import type { Hono } from 'hono';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import { pageSessions, parsePageQuery } from '../sessions/session-page.js';

export function registerSessionRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  app.get('/v1/sessions', async (context) => {
    const query = parsePageQuery({
      state: context.req.query('state'),
      limit: context.req.query('limit'),
      before: context.req.query('before'),
    });
    // One more than the page, to know whether a next page exists; the runtime reads no further.
    const sessions = await state.runtime.listSessions({
      limit: query.limit + 1,
      ...(query.state ? { state: query.state } : {}),
      ...(query.before ? { before: query.before } : {}),
    });
    return context.json(pageSessions(sessions, query), 200);
  });

  app.get('/v1/sessions/:id', async (context) => {
    return context.json(await state.runtime.getSession(context.req.param('id')), 200);
  });

  app.delete('/v1/sessions/:id', async (context) => {
    const sessionId = context.req.param('id');
    await state.runtime.deleteSession(sessionId);
    // Streams following it would otherwise wait for events that can no longer come.
    state.connections.forgetSession(sessionId);
    return context.body(null, 204);
  });
}
