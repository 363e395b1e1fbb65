import { signalExitCode } from '@tether/runtime';
import type { TetherBackend } from '../tether-backend.js';
import { closeReopened, discardSession } from './session-cleanup.js';
import { type TurnStopper, signalGraceMs } from './turn-driver.js';

/**
 * Ending a turn that runs in a daemon: the daemon keeps the session and supervises the agent, so a
 * signal stops the run there (as Ctrl-C does) and this process leaves with the signal's code once
 * the run has ended, after the grace at the latest, or at once on a second signal.
 */
export function daemonTurnStopper(daemon: TetherBackend): TurnStopper {
  return {
    terminate(signal, turn, urgent) {
      const leave = () => process.exit(signalExitCode(signal));
      if (urgent) return leave();
      // No turn yet: what the command waits on (a session the daemon is opening, a worktree made for
      // it) settles, and the command returns without sending the turn, within the signal's deadline.
      // Leaving now would leave the daemon to open a session nobody knows of.
      if (turn === undefined) return;
      // This turn alone, once accepted (within the grace): another caller's run is not this command's.
      turn.stop().then((stopped) => {
        if (stopped === 'nothing') leave();
      }, leave);
      setTimeout(leave, signalGraceMs).unref();
    },
    // The daemon takes commands still: a session opened for the turn, holding nothing, goes at once.
    discardUnused: (sessionId) => discardSession(daemon, sessionId),
    closeUnused: (sessionId) => closeReopened(daemon, sessionId),
  };
}
