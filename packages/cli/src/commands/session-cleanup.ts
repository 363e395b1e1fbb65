import type { TetherBackend } from '../tether-backend.js';

// Taking back what a command opened or reopened for work that never went in: a turn refused or stopped
// before it was sent (turn-driver.ts, run-command.ts), a rewind of a closed session (conversation-commands.ts).

/**
 * Closes again a session reopened for a turn that never went in. Another host may have reopened it
 * too, just before: one with a run or a queued input is theirs now, and is left open.
 */
export async function closeReopened(backend: TetherBackend, sessionId: string): Promise<void> {
  try {
    const snapshot = await backend.getSession(sessionId);
    if (snapshot.activeRunId !== null || (snapshot.queuedInputs ?? []).length > 0) return;
    await backend.closeSession({ sessionId });
  } catch {
    // Best effort, as a discard is: the signal or the refusal is what the user needs to see.
  }
}

/** Closes and deletes a session opened for a turn that never went in; one any run started in is kept. */
export async function discardSession(backend: TetherBackend, sessionId: string): Promise<void> {
  try {
    const snapshot = await backend.getSession(sessionId);
    // Only a session no run ever started in: anything else is the user's history.
    if (snapshot.lastRun !== null || snapshot.activeRunId !== null) return;
    await backend.closeSession({ sessionId });
    await backend.deleteSession(sessionId);
  } catch {
    // Best effort: the refusal is what the user needs to see.
  }
}
