import type { Hono } from 'hono';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';
import { VERSION } from '../version.js';

/**
 * Public: tells local commands a daemon is there, and which version, without a token; and a load
 * balancer whether this daemon can work. 503 (still with the version) while its store says it cannot
 * reach its database: what the store's own heartbeat last found, so answering costs no query.
 * A store with no such report (SQLite) is taken as able.
 */
export function registerHealthRoutes(app: Hono<DaemonEnvironment>, state: Pick<DaemonState, 'store'>): void {
  app.get('/health', (context) => {
    const store = state.store.health?.();
    if (store === undefined || store.ok) return context.json({ ok: true, version: VERSION }, 200);
    const { reason, cause, message, since } = store;
    return context.json(
      { ok: false, version: VERSION, store: { kind: state.store.kind, reason, cause, message, since } },
      503,
    );
  });
}
