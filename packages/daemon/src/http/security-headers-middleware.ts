import type { MiddlewareHandler } from 'hono';
import { securityHeaders } from '../static/security-headers.js';
import type { DaemonEnvironment } from './request-environment.js';

/**
 * The strict headers on every answer, refusals and errors included (see static/security-headers.ts).
 * A handler may choose its own Referrer-Policy, and only that: a one-time link's page needs its form
 * POST to carry its origin, which browsers replace with `null` under `no-referrer`.
 */
export function securityHeadersMiddleware(): MiddlewareHandler<DaemonEnvironment> {
  return async (context, next) => {
    await next();
    for (const [name, value] of Object.entries(securityHeaders)) {
      if (name === 'Referrer-Policy' && context.res.headers.has(name)) continue;
      context.res.headers.set(name, value);
    }
  };
}
