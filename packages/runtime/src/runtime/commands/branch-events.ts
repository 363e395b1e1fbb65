import type { ProtocolEvent } from '@tether/protocol';
import type { TetherStore } from '../../store/tether-store.js';
import { sessionEvents } from '../session-events.js';

/**
 * The events that say which runs a conversation held, and where it was compacted: run.started,
 * session.rewound, session.forked, context.compacted.
 */
export async function branchEvents(store: TetherStore, sessionId: string): Promise<ProtocolEvent[]> {
  const events: ProtocolEvent[] = [];
  for await (const event of sessionEvents(store, sessionId)) {
    if (
      event.type === 'run.started' ||
      event.type === 'session.rewound' ||
      event.type === 'session.forked' ||
      event.type === 'context.compacted'
    ) {
      events.push(event);
    }
  }
  return events;
}

/** The runs in which the conversation was compacted (asked for, or by the agent as it filled up). */
export function compactedRuns(events: readonly ProtocolEvent[]): ReadonlySet<string> {
  return new Set(events.flatMap((event) => (event.type === 'context.compacted' ? [event.runId] : [])));
}

/** The runs that were controls (a slash command such as /review or /init), not turns: they record no checkpoint. */
export function controlRuns(events: readonly ProtocolEvent[]): ReadonlySet<string> {
  return new Set(events.flatMap((event) => (event.type === 'run.started' && event.control ? [event.runId] : [])));
}
