import type { LeaseChange } from '@tether/runtime';
import type { DaemonLogger } from './create-logger.js';

/**
 * A line per session that changed hands without a command, when daemons share a store: an operator
 * sees which daemon drives a session now, and why one stopped. Session ids only.
 */
export function logLeaseChange(logger: DaemonLogger): (change: LeaseChange) => void {
  return (change) => {
    if (change.change === 'adopted') {
      logger.info(
        { sessionId: change.sessionId },
        'took over a session no live daemon held (its daemon stopped, or stopped renewing its lease)',
      );
      return;
    }
    for (const sessionId of change.sessionIds)
      logger.warn(
        { sessionId, noticedBy: change.noticedBy },
        "lost a session's lease to another daemon: its agent was stopped and the other daemon drives it now",
      );
  };
}
