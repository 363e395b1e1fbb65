import type { Hono } from 'hono';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import { prometheusContentType } from '../metrics/daemon-metrics.js';

export function registerMetricsRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  app.get('/v1/metrics', async (context) =>
    context.body(await state.metrics.render(), 200, { 'Content-Type': prometheusContentType }),
  );
}
