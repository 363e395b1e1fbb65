import type { MiddlewareHandler } from 'hono';
import { bearerToken } from '../auth/constant-time.js';
import type { DaemonEnvironment } from './request-environment.js';
import type { DaemonState } from '../daemon-state.js';

/** Every /v1 route needs the bearer token; missing or wrong → 401 with an empty body (nothing to learn from it). */
export function requireToken(state: DaemonState): MiddlewareHandler<DaemonEnvironment> {
  return async (context, next) => {
    if (!state.tokens.verify(bearerToken(context.req.header('authorization')))) {
      context.set('errorCode', 'unauthorized');
      return context.body(null, 401, { 'WWW-Authenticate': 'Bearer' });
    }
    return next();
  };
}
