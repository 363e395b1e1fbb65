import type { Hono } from 'hono';
import type { DaemonEnvironment } from '../http/request-environment.js';
import { VERSION } from '../version.js';

export function registerHealthRoutes(app: Hono<DaemonEnvironment>): void {
  // Public: tells local commands a daemon is there, and which version, without a token.
  app.get('/health', (context) => context.json({ ok: true, version: VERSION }, 200));
}
