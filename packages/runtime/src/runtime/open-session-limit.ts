import { AgentError } from '@tether/protocol';

/**
 * The default cap on open sessions. Every open session stays in the runtime's memory (and is
 * loaded again at start-up) until it is closed, at roughly 40 KB each in the daemon: 5,000 is five
 * times the 1,000 the benchmark drives and about 200 MB at most, so only a runaway client meets it.
 */
export const defaultMaxOpenSessions = 5_000;

/**
 * A cap on open sessions. A place is held from the moment an open is accepted until the new
 * session counts as open, so concurrent opens cannot overshoot it.
 */
export class OpenSessionLimit {
  private readonly max: number;
  private readonly countOpen: () => number;
  private pending = 0;

  constructor(options: { max: number; countOpen: () => number }) {
    this.max = Math.max(1, options.max);
    this.countOpen = options.countOpen;
  }

  /**
   * Runs `work` with a place held, or refuses with capacity_exceeded (nothing done). `work` calls
   * `counted` once the session is counted by countOpen; the place is given back then, or at the end.
   */
  async hold<Result>(work: (counted: () => void) => Promise<Result>): Promise<Result> {
    const open = this.countOpen() + this.pending;
    if (open >= this.max) {
      throw new AgentError({
        code: 'capacity_exceeded',
        message: `${open.toLocaleString('en')} sessions are open, the most this runtime allows (${this.max.toLocaleString('en')}). Close sessions you no longer need (close_session), or raise the limit (maxOpenSessions; tether serve --max-open-sessions).`,
        details: { reason: 'open_session_limit' },
      });
    }
    this.pending += 1;
    let held = true;
    const counted = () => {
      if (!held) return;
      held = false;
      this.pending -= 1;
    };
    try {
      return await work(counted);
    } finally {
      counted();
    }
  }
}
