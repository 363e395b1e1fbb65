import type { Hono } from 'hono';
import type { DaemonEnvironment } from './request-environment.js';

interface RoutePattern {
  readonly method: string;
  readonly pattern: RegExp;
}

/**
 * The methods the app answers at a path, read from its own routes (so a route added later is known
 * without a list to keep): what a 405 names in its Allow header, empty when no route has the path.
 * Wildcard routes are left out: the middleware, and the web UI's GET for its files at every path,
 * which would otherwise make any unknown path a 405 instead of a 404.
 */
export function allowedMethods(app: Hono<DaemonEnvironment>): (path: string) => string[] {
  // Read at the first miss: every route is registered by then.
  let patterns: RoutePattern[] | undefined;
  return (path) => {
    patterns ??= app.routes
      .filter((route) => route.method !== 'ALL' && !route.path.includes('*'))
      .map((route) => ({ method: route.method, pattern: patternOf(route.path) }));
    const methods = new Set(patterns.filter(({ pattern }) => pattern.test(path)).map(({ method }) => method));
    // Hono answers HEAD with a GET route.
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}

/** A route path such as /v1/sessions/:id/events as a pattern; a :name stands for one path segment. */
function patternOf(routePath: string): RegExp {
  const segments = routePath
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}$`);
}
