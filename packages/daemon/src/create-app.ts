import { Hono } from 'hono';
import { AgentError } from '@tether/protocol';
import { describeError, invalidRequest, methodNotAllowed, routeNotFound } from './errors/error-response.js';
import { registerCommandRoutes } from './routes/commands.js';
import { registerEventRoutes } from './routes/events.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerLinkRoutes } from './notifications/link-routes.js';
import { registerPushRoutes } from './notifications/push-routes.js';
import { registerMetricsRoutes } from './routes/metrics.js';
import { registerOpenApiRoutes } from './routes/openapi.js';
import { registerProviderRoutes } from './routes/providers.js';
import { registerSessionRoutes } from './routes/sessions.js';
import { registerWebRoutes } from './routes/web.js';
import type { DaemonEnvironment } from './http/request-environment.js';
import type { DaemonState } from './daemon-state.js';
import { allowedMethods } from './http/allowed-methods.js';
import { originGuard } from './http/origin-guard.js';
import { requestLog } from './http/request-log.js';
import { requireToken } from './http/require-token.js';
import { securityHeadersMiddleware } from './http/security-headers-middleware.js';

/** A stack without its first line: the message of an unexpected error may quote input, the frames do not. */
function stackFrames(error: unknown): string | undefined {
  return error instanceof Error && error.stack ? error.stack.split('\n').slice(1, 12).join('\n') : undefined;
}

/**
 * The daemon's app, assembled from the routes and http/'s plumbing (which therefore holds no route):
 * the origin check and the token in front of every /v1 route but the one-time links, one error mapping behind;
 * the web UI's public files (when the daemon was given them) at every other path.
 */
export function createApp(state: DaemonState): Hono<DaemonEnvironment> {
  const app = new Hono<DaemonEnvironment>();
  app.use('*', requestLog(state));
  app.use('*', securityHeadersMiddleware());
  app.use('*', originGuard(state));
  registerHealthRoutes(app, state);
  // Before the token check: a one-time link is its own credential, good for one answer only.
  registerLinkRoutes(app, state);
  app.use('/v1/*', requireToken(state));
  registerCommandRoutes(app, state);
  registerSessionRoutes(app, state);
  registerEventRoutes(app, state);
  registerProviderRoutes(app, state);
  registerMetricsRoutes(app, state);
  registerPushRoutes(app, state);
  registerOpenApiRoutes(app);
  app.get('/v1/ws', () => {
    throw invalidRequest(
      '/v1/ws is a WebSocket endpoint: connect with an Upgrade: websocket request.',
      'websocket_upgrade_required',
    );
  });
  registerWebRoutes(app, state);

  const methodsAt = allowedMethods(app);
  // Also what the web UI's catch-all answers for a path it has no file for, and for any path under /v1.
  app.notFound((context) => {
    const method = context.req.method;
    const allowed = methodsAt(context.req.path);
    const { status, body, code } = describeError(
      allowed.length > 0 && !allowed.includes(method) ? methodNotAllowed(method, allowed) : routeNotFound(method),
    );
    context.set('errorCode', code);
    if (code === 'method_not_allowed') context.header('Allow', allowed.join(', '));
    return context.json(body, status as 404);
  });
  app.onError((error, context) => {
    const { status, body, code } = describeError(error);
    context.set('errorCode', code);
    if (!AgentError.isInstance(error))
      state.logger.error(
        { errorName: error instanceof Error ? error.name : typeof error, stack: stackFrames(error) },
        'unexpected error',
      );
    return context.json(body, status as 500);
  });
  return app;
}
