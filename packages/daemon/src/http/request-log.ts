import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { DaemonEnvironment } from './request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import type { RefusalKind } from '../logging/refused-request-log.js';

/** The label of every request the web UI's files answered (its catch-all route has no pattern worth a label). */
const webUiRouteLabel = 'web_ui';

/** Routes that answer without the token. */
const openToAnyone = new Set(['/health', webUiRouteLabel]);

/**
 * The route pattern the request matched (e.g. "/v1/sessions/:id"), "web_ui" for the web UI's files,
 * or "unmatched": never the raw path. The pattern is the API route's even when a check in front of
 * it answered (a 401 names the route it guarded). Hono lists every route matching the path,
 * middleware and the web UI's catch-all `/*` (registered last, it matches every GET) included: the
 * last match is that catch-all, not the route that answered.
 */
export function routeLabel(context: Context): string {
  let routes: ReturnType<typeof matchedRoutes>;
  try {
    routes = matchedRoutes(context);
  } catch {
    return 'unmatched';
  }
  // A handler (middleware is registered for ALL methods) with a pattern of its own: an API route.
  const route = routes.find((matched) => matched.method !== 'ALL' && !matched.path.includes('*'));
  if (route) return route.path;
  // No API route: a path of the web UI (its catch-all matched; never one under /v1, the API's),
  // unless it had no such file (the app's not-found answer).
  const path = context.req.path;
  const underApi = path === '/v1' || path.startsWith('/v1/');
  const webUi = routes.some((matched) => matched.method !== 'ALL' && matched.path.includes('*'));
  return webUi && !underApi && context.get('errorCode') !== 'route_not_found' ? webUiRouteLabel : 'unmatched';
}

/**
 * Which of the refusals anyone can cause at will an answer is, if one: the token check's 401 (a
 * command's `auth_required`, also 401, is the agent's, for a caller with the token), the origin
 * guard's 403 (no error code answers 403), a path no route answers (a 404 of a route that exists,
 * such as an unknown session's, is logged as ever), a method its path does not take (405).
 */
function refusalOf(status: number, errorCode: string | undefined): RefusalKind | null {
  if (status === 401 && errorCode === 'unauthorized') return 'unauthorized';
  if (status === 403) return 'foreign_host_or_origin';
  if (status === 404 && errorCode === 'route_not_found') return 'route_not_found';
  if (status === 405 && errorCode === 'method_not_allowed') return 'method_not_allowed';
  if (status === 410 && errorCode === 'link_unavailable') return 'link_unavailable';
  return null;
}

/**
 * One structured line and one counter per request: method, route, status, duration, session, error code.
 * Requests refused for want of the token (401), for a foreign Host or Origin (403), for a path no
 * route answers (404) or for a one-time link no longer there (410) are counted each, logged
 * rate-limited (refused-request-log.ts).
 */
export function requestLog(state: DaemonState): MiddlewareHandler<DaemonEnvironment> {
  return async (context, next) => {
    const started = performance.now();
    await next();
    const route = routeLabel(context);
    const status = context.res.status;
    state.metrics.countRequest(route, status);
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    // Anyone on the machine can send these as fast as they like: rate-limited, and nothing of the request's own.
    const refusal = refusalOf(status, context.get('errorCode'));
    if (refusal !== null)
      return state.refusals.refused(refusal, { method: context.req.method, route, durationMs }, 'request');
    const fields: Record<string, unknown> = { method: context.req.method, route, status, durationMs };
    const sessionId = context.get('sessionId') ?? context.req.param('id');
    if (sessionId) fields['sessionId'] = sessionId;
    const errorCode = context.get('errorCode');
    if (errorCode) fields['errorCode'] = errorCode;
    const commandType = context.get('commandType');
    if (commandType) fields['commandType'] = commandType;
    // /health answers 503 by design while the store is down, and a load balancer asks every few
    // seconds: the store's own background log says why, so a probe is no failure of its own.
    // 501 capability_unsupported answers what the caller asked of a session that has no such thing,
    // and 503 runtime_stopped a request that came while the daemon was stopping, as it should.
    if (
      status >= 500 &&
      route !== '/health' &&
      errorCode !== 'capability_unsupported' &&
      errorCode !== 'runtime_stopped'
    )
      state.logger.error(fields, 'request failed');
    // Anyone on the machine may ask for these (no token), as fast as they like: not at the default level.
    else if (openToAnyone.has(route)) state.logger.debug(fields, 'request');
    else state.logger.info(fields, 'request');
  };
}
