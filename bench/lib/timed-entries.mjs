/**
 * Entries kept with their arrival time, and waits for "the first entry like this after that mark":
 * what the raw claude process (stdout frames) and Tether (delivered events) both need, so a scenario
 * can wait for an event that may already have arrived without a race.
 */
export class TimedEntries {
  /** subjectOf: what a predicate looks at in an entry (its frame, its event). */
  constructor(subjectOf) {
    this.subjectOf = subjectOf;
    /** Every entry so far, in arrival order. */
    this.entries = [];
    this.waiters = new Set();
  }

  add(entry) {
    this.entries.push(entry);
    for (const waiter of this.waiters) {
      if (waiter.predicate(this.subjectOf(entry))) {
        this.waiters.delete(waiter);
        waiter.resolve(entry);
      }
    }
  }

  /** Where the entries so far end: pass it to waitFor to see only later ones. */
  mark() {
    return this.entries.length;
  }

  /** Nothing more will arrive: everyone still waiting gets `error`. */
  end(error) {
    for (const waiter of this.waiters) waiter.reject(error);
    this.waiters.clear();
  }

  /** The first entry at or after `from` that matches; rejects with timeoutMessage() after timeoutMs. */
  waitFor(predicate, from, timeoutMs, timeoutMessage) {
    for (let index = from; index < this.entries.length; index += 1) {
      if (predicate(this.subjectOf(this.entries[index]))) return Promise.resolve(this.entries[index]);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(timeoutMessage()));
      }, timeoutMs);
      const settle = (settler) => (value) => {
        clearTimeout(timer);
        settler(value);
      };
      const waiter = { predicate, resolve: settle(resolve), reject: settle(reject) };
      this.waiters.add(waiter);
    });
  }
}
