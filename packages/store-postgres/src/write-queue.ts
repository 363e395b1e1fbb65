/**
 * The store's writes, one at a time in call order: a runtime's commits must land in the order it
 * made them (a pool would race them), and a lease released after a commit must go after it. A write
 * that fails does not stop the ones queued behind it.
 */
export class WriteQueue {
  #tail: Promise<unknown> = Promise.resolve();

  run<Result>(work: () => Promise<Result>): Promise<Result> {
    const done = this.#tail.then(work);
    this.#tail = done.catch(() => undefined);
    return done;
  }

  /** Resolves once every write queued so far has ended. */
  async drained(): Promise<void> {
    await this.#tail;
  }
}
