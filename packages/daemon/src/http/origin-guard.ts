import type { MiddlewareHandler } from 'hono';
import { judgeOrigin, passesOriginPolicy } from '../auth/origin-check.js';
import type { DaemonEnvironment } from './request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import { corsHeaders } from './direct-answer-headers.js';

const allowedMethods = 'GET, POST, DELETE, OPTIONS';
const allowedHeaders = 'Authorization, Content-Type, Last-Event-ID';

/**
 * The DNS-rebinding defence for every request (403, empty body), then CORS, sent only for origins
 * the user allowed explicitly: the daemon's own pages are same-origin and need none.
 */
export function originGuard(state: DaemonState): MiddlewareHandler<DaemonEnvironment> {
  return async (context, next) => {
    const origin = context.req.header('origin');
    if (!passesOriginPolicy({ host: context.req.header('host'), origin }, state.policy)) {
      return context.body(null, 403);
    }
    const allowed = origin !== undefined && judgeOrigin(origin, state.policy) === 'allowed';
    if (allowed && context.req.method === 'OPTIONS' && context.req.header('access-control-request-method')) {
      return context.body(null, 204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': allowedMethods,
        'Access-Control-Allow-Headers': allowedHeaders,
        'Access-Control-Max-Age': '600',
        Vary: 'Origin',
      });
    }
    await next();
    for (const [name, value] of Object.entries(corsHeaders(origin, state.policy))) {
      if (name === 'Vary') context.res.headers.append(name, value);
      else context.res.headers.set(name, value);
    }
  };
}
