import type { PermissionMode } from '@tether/protocol';

/** The mode the menu shows for a session whose agent has not named one: the agent's own default. */
const defaultMode: PermissionMode = 'ask_before_edit';

/** A mode picked in the menu, and the session's mode it was picked over. */
export interface ChosenMode {
  readonly mode: PermissionMode;
  readonly over: PermissionMode;
}

/** Records a pick over the session's mode as the menu showed it. */
export function chooseMode(mode: PermissionMode, sessionMode: PermissionMode | null): ChosenMode {
  return { mode, over: sessionMode ?? defaultMode };
}

/**
 * The mode the menu shows: the one picked here, unless the session's mode has changed since (another
 * client, a plan approved into a mode). The agent naming the default it was shown with is no change: a
 * new session's first report came after the pick and dropped it unasked.
 */
export function shownMode(chosen: ChosenMode | null, sessionMode: PermissionMode | null): PermissionMode {
  const current = sessionMode ?? defaultMode;
  return chosen !== null && chosen.over === current ? chosen.mode : current;
}
