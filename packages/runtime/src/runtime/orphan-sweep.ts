import { AgentError } from '@tether/protocol';
import type { SessionCoordination } from '../store/session-coordination.js';

export interface OrphanSweepParts {
  readonly coordination: SessionCoordination;
  readonly isResident: (sessionId: string) => boolean;
  /** Takes the session over: claimed, read and recovered through the session cache. */
  readonly adopt: (sessionId: string) => Promise<void>;
  readonly onError: (error: unknown) => void;
}

/**
 * Every sweepIntervalMs, the open sessions whose runtime stopped renewing its lease (or released
 * them without closing them, at a clean shutdown) are taken over here. One sweep at a time; the
 * timer keeps no process alive, and stop() ends it and waits for a sweep in progress.
 */
export class OrphanSweep {
  private readonly parts: OrphanSweepParts;
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(parts: OrphanSweepParts) {
    this.parts = parts;
    this.timer = setInterval(() => void this.sweep(), parts.coordination.sweepIntervalMs);
    this.timer.unref();
  }

  /** One sweep (the one in progress, if any). */
  sweep(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.sweepOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async sweepOnce(): Promise<void> {
    let orphans: string[];
    try {
      orphans = await this.parts.coordination.findOrphans();
    } catch (error) {
      this.parts.onError(error);
      return;
    }
    for (const sessionId of orphans) {
      if (this.stopped) return;
      if (this.parts.isResident(sessionId)) continue;
      try {
        await this.parts.adopt(sessionId);
      } catch (error) {
        // Another survivor took it first, or it was deleted meanwhile: not this runtime's to adopt.
        if (AgentError.isInstance(error) && ['session_owned_elsewhere', 'session_not_found'].includes(error.code))
          continue;
        this.parts.onError(error);
      }
    }
  }
}
