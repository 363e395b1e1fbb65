import type { ProtocolEventType } from './events.js';

/**
 * Events about the machinery rather than the conversation: an agent process coming and going (it
 * is released after 15 quiet minutes, and a restarted runtime records every left-over one),
 * diagnostics, and the reports an agent makes on its own (plan limits when a process starts, the
 * context window after a run). They do not count as a session's activity, so the session list does
 * not reorder itself on housekeeping.
 */
export const housekeepingEventTypes: readonly ProtocolEventType[] = [
  'session.process_started',
  'session.process_stopped',
  'diagnostic',
  'session.limits_changed',
  'session.context_measured',
];

/** Whether an event of this type moves a session's lastActivityAt. */
export function countsAsActivity(type: ProtocolEventType): boolean {
  return !housekeepingEventTypes.includes(type);
}
