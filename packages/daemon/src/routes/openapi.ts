import type { Hono } from 'hono';
import type { DaemonEnvironment } from '../http/request-environment.js';
import { buildOpenApiDocument } from '../openapi/openapi-document.js';

export function registerOpenApiRoutes(app: Hono<DaemonEnvironment>): void {
  // Built on first request: generating the schemas costs a few milliseconds nobody needs at start-up.
  let document: string | null = null;
  app.get('/v1/openapi.json', (context) => {
    document ??= JSON.stringify(buildOpenApiDocument());
    return context.body(document, 200, { 'Content-Type': 'application/json; charset=utf-8' });
  });
}
