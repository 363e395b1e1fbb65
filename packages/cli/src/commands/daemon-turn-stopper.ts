import { signalExitCode } from '@tether/runtime';
import { type TurnStopper, signalGraceMs } from './turn-driver.js';

/**
 * Ending a turn that runs in a daemon: the daemon keeps the session and supervises the agent, so a
 * signal stops the run there (as Ctrl-C does) and this process leaves with the signal's code once
 * the run has ended, after the grace at the latest, or at once on a second signal.
 */
export function daemonTurnStopper(): TurnStopper {
  return {
    terminate(signal, turn, urgent) {
      const leave = () => process.exit(signalExitCode(signal));
      if (urgent || turn === undefined) return leave();
      // This turn alone, once accepted (within the grace): another caller's run is not this command's.
      turn.stop().then((stopped) => {
        if (stopped === 'nothing') leave();
      }, leave);
      setTimeout(leave, signalGraceMs).unref();
    },
  };
}
