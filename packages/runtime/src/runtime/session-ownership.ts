import type { AgentError } from '@tether/protocol';
import type { SessionCoordination } from '../store/session-coordination.js';
import { sessionOwnedElsewhere } from './runtime-errors.js';

/**
 * Which sessions this runtime may drive, over the store's coordination. Without one (a store this
 * runtime holds alone: in-memory, SQLite) every session is this runtime's and nothing here does
 * anything. With one, a session is driven only once claimed; a claim and a release of the same
 * session never overtake each other (a session that left memory and is needed again at once must
 * not lose the lease it was just given).
 */
export class SessionOwnership {
  readonly coordination: SessionCoordination | undefined;
  private readonly pending = new Map<string, Promise<unknown>>();

  constructor(coordination: SessionCoordination | undefined) {
    this.coordination = coordination;
  }

  /** Whether other runtimes share the store (sessions may be driven elsewhere). */
  get shared(): boolean {
    return this.coordination !== undefined;
  }

  /** Takes the session's lease; throws session_owned_elsewhere, naming the holder, when a live runtime has it. */
  async claim(sessionId: string): Promise<void> {
    const coordination = this.coordination;
    if (!coordination) return;
    const claim = await this.inTurn(sessionId, () => coordination.claim(sessionId));
    if (claim.status === 'held_elsewhere') throw sessionOwnedElsewhere(claim.holder);
  }

  /**
   * Gives leases up (the sessions left memory). Best effort: a lease not released ends with this
   * runtime's heartbeat, and the sweep of another runtime takes the session then.
   */
  release(sessionIds: readonly string[]): void {
    const coordination = this.coordination;
    if (!coordination) return;
    for (const sessionId of sessionIds)
      void this.inTurn(sessionId, () => coordination.release([sessionId])).catch(() => undefined);
  }

  /**
   * What a command whose write was refused because the session's lease was lost tells its caller:
   * session_owned_elsewhere naming the runtime that took it, or the refusal itself if none holds it now.
   */
  async refusalAfterLoss(sessionId: string, refusal: AgentError): Promise<AgentError> {
    const coordination = this.coordination;
    if (!coordination) return refusal;
    try {
      const claim = await this.inTurn(sessionId, () => coordination.claim(sessionId));
      if (claim.status === 'held_elsewhere') return sessionOwnedElsewhere(claim.holder);
      // Its new holder is gone already: this runtime does not keep a lease on a session it dropped.
      this.release([sessionId]);
    } catch {
      // The refusal says enough.
    }
    return refusal;
  }

  private inTurn<Result>(sessionId: string, work: () => Promise<Result>): Promise<Result> {
    const previous = this.pending.get(sessionId) ?? Promise.resolve();
    const result = previous.then(work, work);
    const settled = result.catch(() => undefined);
    this.pending.set(sessionId, settled);
    void settled.then(() => {
      if (this.pending.get(sessionId) === settled) this.pending.delete(sessionId);
    });
    return result;
  }
}
