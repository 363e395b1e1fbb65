import type { ProtocolEventType } from './events.js';

/**
 * Events about the machinery rather than the conversation: an agent process coming and going (it
 * is released after 15 quiet minutes, and a restarted runtime records every left-over one) and
 * diagnostics. They do not count as a session's activity, so the session list does not reorder
 * itself on housekeeping.
 */
export const housekeepingEventTypes: readonly ProtocolEventType[] = [
  'session.process_started',
  'session.process_stopped',
  'diagnostic',
];

/** Whether an event of this type moves a session's lastActivityAt. */
export function countsAsActivity(type: ProtocolEventType): boolean {
  return !housekeepingEventTypes.includes(type);
}
