import type { EventWriter } from '../log/event-writer.js';
import type { SessionCache } from './session-cache.js';
import type { StoreFailureRepair } from './store-failure-repair.js';

export interface LostSessionsParts {
  readonly entries: SessionCache;
  readonly writer: EventWriter;
  readonly storeFailures: StoreFailureRepair;
}

/**
 * Another runtime took these sessions' leases (this one stopped renewing in time, or its commit was
 * refused): their agents stop at once, forced (their output can no longer be written), what was
 * staged for them is dropped, and they leave memory, so their next command claims them again and
 * is refused with session_owned_elsewhere. Nothing of theirs is retried: their new holder ended
 * their runs.
 */
export function dropLostSessions(parts: LostSessionsParts, sessionIds: readonly string[]): void {
  parts.writer.discard(sessionIds);
  for (const sessionId of sessionIds) {
    parts.storeFailures.abandon(sessionId);
    const entry = parts.entries.get(sessionId);
    if (!entry) continue;
    entry.clearAllTimers();
    parts.entries.remove(entry);
    entry.stopProvider('release', { force: true }).catch(() => undefined);
  }
}
