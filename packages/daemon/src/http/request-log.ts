import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import type { DaemonEnvironment } from './request-environment.js';
import type { DaemonState } from '../daemon-state.js';

/** The route pattern that answered (e.g. "/v1/sessions/:id"), or "unmatched": never the raw path. */
export function routeLabel(context: Context): string {
  try {
    const path = routePath(context, -1);
    return path.includes('*') ? 'unmatched' : path;
  } catch {
    return 'unmatched';
  }
}

/** One structured line and one counter per request: method, route, status, duration, session, error code. */
export function requestLog(state: DaemonState): MiddlewareHandler<DaemonEnvironment> {
  return async (context, next) => {
    const started = performance.now();
    await next();
    const route = routeLabel(context);
    const status = context.res.status;
    state.metrics.countRequest(route, status);
    const fields: Record<string, unknown> = {
      method: context.req.method,
      route,
      status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
    };
    const sessionId = context.get('sessionId') ?? context.req.param('id');
    if (sessionId) fields['sessionId'] = sessionId;
    const errorCode = context.get('errorCode');
    if (errorCode) fields['errorCode'] = errorCode;
    const commandType = context.get('commandType');
    if (commandType) fields['commandType'] = commandType;
    if (status >= 500) state.logger.error(fields, 'request failed');
    else state.logger.info(fields, 'request');
  };
}
