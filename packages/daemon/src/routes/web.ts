import type { Hono } from 'hono';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import { staticResponse } from '../static/static-files.js';

/**
 * The web UI's files at every path the API does not use. Registered last: /health and /v1 answer
 * first, and an unknown /v1 path stays the API's 404, never the UI.
 */
export function registerWebRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  const files = state.staticFiles;
  if (files === null) return;
  // Hono answers HEAD with this GET handler and drops the body.
  app.get('/*', async (context) => {
    const urlPath = context.req.path;
    if (urlPath === '/v1' || urlPath.startsWith('/v1/')) return context.notFound();
    const file = await files.lookup(urlPath, context.req.header('accept'));
    return file === null ? context.notFound() : staticResponse(context, file);
  });
}
