import type { MiddlewareHandler } from 'hono';
import { securityHeaders } from '../static/security-headers.js';
import type { DaemonEnvironment } from './request-environment.js';

/** The strict headers on every answer, refusals and errors included (see static/security-headers.ts). */
export function securityHeadersMiddleware(): MiddlewareHandler<DaemonEnvironment> {
  return async (context, next) => {
    await next();
    for (const [name, value] of Object.entries(securityHeaders)) context.res.headers.set(name, value);
  };
}
