/** Ends a reader from outside it: with the error its consumer is told, or without one (a normal end). */
export type EndReader = (error?: unknown) => void;

/**
 * The session reads in progress that something outside them ends (subscribe iterations, and follows
 * on a shared store), per session: a session's when it is deleted, every one when the runtime shuts
 * down. A reader forgets itself once it ended, however it ended.
 */
export class OpenReaders {
  private readonly bySession = new Map<string, Set<EndReader>>();

  /** Registers a reader of the session; returns how to forget it. */
  add(sessionId: string, end: EndReader): () => void {
    let ends = this.bySession.get(sessionId);
    if (ends === undefined) {
      ends = new Set();
      this.bySession.set(sessionId, ends);
    }
    const registered = ends;
    registered.add(end);
    return () => {
      registered.delete(end);
      if (registered.size === 0 && this.bySession.get(sessionId) === registered) this.bySession.delete(sessionId);
    };
  }

  /** Ends each reader of the session with `error` (a reader may forget itself while this runs). */
  endSession(sessionId: string, error: unknown): void {
    for (const end of [...(this.bySession.get(sessionId) ?? [])]) end(error);
  }

  /** Ends every reader without an error. */
  endAll(): void {
    for (const ends of [...this.bySession.values()]) for (const end of [...ends]) end();
  }
}
