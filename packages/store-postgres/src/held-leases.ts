/**
 * The fencing token this store holds each session's lease with: set by a claim (or a commit that
 * claimed a session no one held), checked by every commit, dropped when the lease is released or
 * found taken.
 */
export class HeldLeases {
  readonly ownerId: string;
  readonly #tokens = new Map<string, number>();

  constructor(ownerId: string) {
    this.ownerId = ownerId;
  }

  tokenOf(sessionId: string): number | undefined {
    return this.#tokens.get(sessionId);
  }

  hold(sessionId: string, token: number): void {
    this.#tokens.set(sessionId, token);
  }

  forget(sessionIds: Iterable<string>): void {
    for (const sessionId of sessionIds) this.#tokens.delete(sessionId);
  }

  /** Forgets the sessions still held with the token they had in `snapshot` (a claim since then stands). */
  forgetUnchanged(snapshot: ReadonlyMap<string, number>, sessionIds: readonly string[]): string[] {
    const forgotten = sessionIds.filter((sessionId) => this.#tokens.get(sessionId) === snapshot.get(sessionId));
    this.forget(forgotten);
    return forgotten;
  }

  snapshot(): ReadonlyMap<string, number> {
    return new Map(this.#tokens);
  }
}
