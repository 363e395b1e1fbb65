import type { SessionEntry } from './session-entry.js';

export interface SessionCacheOptions {
  /** How many closed sessions stay in memory once nothing uses them (the most recently used). */
  readonly closedCapacity: number;
  /** Reads a session that is not in memory from the store (undefined: no such session). */
  readonly load: (sessionId: string) => Promise<SessionEntry | undefined>;
  /** A closed session left memory (what is kept about it elsewhere, e.g. its seq counter, can go too). */
  readonly onEvict: (entry: SessionEntry) => void;
}

/**
 * The sessions held in memory. Open sessions always are; a closed one is read back from the store
 * when a command needs it, and stays only while something uses it or while it is among the most
 * recently used closed sessions, so memory follows the open sessions, not every session ever made.
 *
 * A command pins its session for as long as it runs (acquire/release), so everyone working on one
 * session at the same time holds the same entry; an entry leaves only when it is closed, unpinned,
 * and has no provider, teardown or timer still attached to it.
 */
export class SessionCache {
  private readonly options: SessionCacheOptions;
  private readonly resident = new Map<string, SessionEntry>();
  private readonly pins = new Map<SessionEntry, number>();
  /** Closed sessions in memory, least recently used first (a Map keeps insertion order). */
  private readonly closed = new Map<string, SessionEntry>();
  /** One read per session at a time: concurrent commands on a session that is not in memory share it. */
  private readonly loading = new Map<string, Promise<SessionEntry | undefined>>();

  constructor(options: SessionCacheOptions) {
    this.options = options;
  }

  /** The session if it is in memory (every open session is). */
  get(sessionId: string): SessionEntry | undefined {
    return this.resident.get(sessionId);
  }

  /** How many sessions are open (every open session is in memory). */
  countOpen(): number {
    let open = 0;
    for (const entry of this.resident.values()) if (entry.record.state !== 'closed') open += 1;
    return open;
  }

  /** Every session in memory right now. */
  entries(): SessionEntry[] {
    return [...this.resident.values()];
  }

  add(entry: SessionEntry): void {
    this.resident.set(entry.record.sessionId, entry);
  }

  /** A deleted session, or one whose opening failed: gone at once, pinned or not. */
  remove(entry: SessionEntry): void {
    const sessionId = entry.record.sessionId;
    if (this.resident.get(sessionId) !== entry) return;
    entry.removed = true;
    this.resident.delete(sessionId);
    this.closed.delete(sessionId);
  }

  /** The session, in memory and pinned until release; undefined if no session has that id. */
  async acquire(sessionId: string): Promise<SessionEntry | undefined> {
    // A loop, not one read: an entry read back could in principle leave again before this caller pins it.
    for (;;) {
      const entry = this.resident.get(sessionId);
      if (entry) {
        this.pins.set(entry, (this.pins.get(entry) ?? 0) + 1);
        return entry;
      }
      if (!(await this.loadOnce(sessionId))) return undefined;
    }
  }

  release(entry: SessionEntry): void {
    const pins = (this.pins.get(entry) ?? 1) - 1;
    if (pins > 0) this.pins.set(entry, pins);
    else this.pins.delete(entry);
    this.touch(entry);
  }

  /**
   * Records that the session was just used (a closed one moves to the most recent end, a reopened
   * one stops counting as closed), then lets the least recently used idle closed sessions go.
   */
  touch(entry: SessionEntry): void {
    const sessionId = entry.record.sessionId;
    if (this.resident.get(sessionId) !== entry) return;
    this.closed.delete(sessionId);
    if (entry.record.state === 'closed') this.closed.set(sessionId, entry);
    this.evictBeyondCapacity();
  }

  private evictBeyondCapacity(): void {
    let excess = this.closed.size - this.options.closedCapacity;
    for (const [sessionId, entry] of this.closed) {
      if (excess <= 0) return;
      // One still in use, or reopened meanwhile, waits for its own release to be reconsidered.
      if (this.pins.has(entry) || entry.record.state !== 'closed' || !entry.isQuiet()) continue;
      this.closed.delete(sessionId);
      this.resident.delete(sessionId);
      this.options.onEvict(entry);
      excess -= 1;
    }
  }

  private loadOnce(sessionId: string): Promise<SessionEntry | undefined> {
    let loading = this.loading.get(sessionId);
    if (!loading) {
      loading = this.options
        .load(sessionId)
        .then((entry) => {
          if (entry && !this.resident.has(sessionId)) this.resident.set(sessionId, entry);
          return entry;
        })
        .finally(() => this.loading.delete(sessionId));
      this.loading.set(sessionId, loading);
    }
    return loading;
  }
}
