import { AgentError, type EventBody, type ProtocolEvent } from '@tether/protocol';
import type {
  BlobRecord,
  InteractionRecord,
  RunRecord,
  SessionRecord,
  StoredReceipt,
  TetherStore,
} from '../store/tether-store.js';
import { lostSessionsOf } from '../store/lease-lost.js';
import { addStagedEvent } from './delta-coalescing.js';

export interface StagedEvent {
  readonly sessionId: string;
  readonly body: EventBody;
  readonly at: string;
}

/** What one step changes: events to append and the records they move. */
export interface Change {
  readonly events: readonly StagedEvent[];
  readonly sessions: readonly SessionRecord[];
  readonly runs: readonly RunRecord[];
  readonly interactions: readonly InteractionRecord[];
  /** Bytes the events refer to (a turn's images): stored in the same transaction. */
  readonly blobs?: readonly BlobRecord[];
}

interface Draft {
  events: StagedEvent[];
  sessions: Map<string, SessionRecord>;
  runs: Map<string, RunRecord>;
  interactions: Map<string, InteractionRecord>;
  receipts: StoredReceipt[];
  blobs: BlobRecord[];
}

export interface EventWriterOptions {
  readonly store: TetherStore;
  /** Called once per committed unit, in commit order: this is where events get published. */
  readonly onCommitted: (events: readonly ProtocolEvent[]) => void;
  /**
   * A background batch could not be stored even after retries: it was dropped, and so is every
   * later change of these sessions (a command's is refused) until `repair` stores one for each.
   */
  readonly onDropped: (sessionIds: readonly string[], error: AgentError) => void;
  /**
   * A shared store refused a unit because another runtime took these sessions' leases: nothing of
   * theirs is written again (what was staged is dropped, their counters forgotten), and a background
   * unit is written without them at once (never retried for them).
   */
  readonly onLeaseLost?: (sessionIds: readonly string[]) => void;
}

/** How a unit is written: a command's once (it fails to its caller), background output with retries, a repair once. */
type WriteKind = 'command' | 'background' | 'repair';

const backgroundRetryDelaysMs = [20, 200, 1000];

/**
 * The CLI writes about one line per pipe read, so committing every tick meant one transaction per
 * event. A burst is committed at once after a quiet spell (the first byte waits for nothing), then at
 * most once per display frame: text reaching a screen faster than it refreshes is not seen sooner,
 * while each commit costs ~0.3 ms of CPU on a busy 2-core machine (a 2,000-delta turn: ~20 commits at
 * the 5 ms this was, ~7 at 16 ms).
 */
const coalesceMs = 16;

function emptyDraft(): Draft {
  return { events: [], sessions: new Map(), runs: new Map(), interactions: new Map(), receipts: [], blobs: [] };
}

function isEmpty(draft: Draft): boolean {
  return (
    draft.events.length === 0 &&
    draft.sessions.size === 0 &&
    draft.runs.size === 0 &&
    draft.interactions.size === 0 &&
    draft.receipts.length === 0 &&
    draft.blobs.length === 0
  );
}

function sessionIdsOf(draft: Draft): Set<string> {
  const ids = new Set<string>(draft.sessions.keys());
  for (const staged of draft.events) ids.add(staged.sessionId);
  for (const run of draft.runs.values()) ids.add(run.sessionId);
  for (const interaction of draft.interactions.values()) ids.add(interaction.sessionId);
  for (const blob of draft.blobs) ids.add(blob.sessionId);
  return ids;
}

/** The draft without anything of these sessions. */
function without(draft: Draft, excluded: ReadonlyMap<string, unknown>): Draft {
  const kept = (sessionId: string) => !excluded.has(sessionId);
  return {
    events: draft.events.filter((staged) => kept(staged.sessionId)),
    sessions: new Map([...draft.sessions].filter(([sessionId]) => kept(sessionId))),
    runs: new Map([...draft.runs].filter(([, run]) => kept(run.sessionId))),
    interactions: new Map([...draft.interactions].filter(([, interaction]) => kept(interaction.sessionId))),
    receipts: draft.receipts,
    blobs: draft.blobs.filter((blob) => kept(blob.sessionId)),
  };
}

function addChange(draft: Draft, change: Change): void {
  for (const staged of change.events) addStagedEvent(draft.events, staged);
  for (const session of change.sessions) draft.sessions.set(session.sessionId, session);
  for (const run of change.runs) draft.runs.set(run.runId, run);
  for (const interaction of change.interactions)
    draft.interactions.set(`${interaction.sessionId}/${interaction.interactionRef}`, interaction);
  if (change.blobs) draft.blobs.push(...change.blobs);
}

/**
 * The single writer of the log. Provider output is staged synchronously and written in one
 * transaction per tick (so a burst of deltas costs one commit); commands write their own unit
 * after whatever was staged before them. Sequence numbers are given at commit time, so a failed
 * commit leaves no gap. Events are published only after their commit (persist, then publish).
 * A background batch that cannot be stored even after retries is dropped whole, and its sessions
 * are held as failed: nothing more of theirs is written until a repair unit (their consistent end,
 * continuing from their last stored seq) is stored.
 */
export class EventWriter {
  private readonly options: EventWriterOptions;
  private readonly lastSeq = new Map<string, number>();
  private staged: Draft = emptyDraft();
  private scheduledFlush: { cancel(): void } | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private lastFlushAt = 0;
  /** Sessions whose output was dropped, with why: nothing of theirs is written until a repair. */
  private readonly failed = new Map<string, AgentError>();
  /** A stopping runtime: a background unit that fails is dropped at once, not tried again. */
  private lastAttempts = false;

  constructor(options: EventWriterOptions) {
    this.options = options;
  }

  /** The seq of the last committed event of a session (0 if none). */
  lastSeqOf(sessionId: string): number {
    return this.lastSeq.get(sessionId) ?? 0;
  }

  restoreLastSeq(sessionId: string, seq: number): void {
    this.lastSeq.set(sessionId, seq);
  }

  /** Why the session's output is being dropped (undefined while its log is consistent). */
  failureOf(sessionId: string): AgentError | undefined {
    return this.failed.get(sessionId);
  }

  /** Drops what is staged for these sessions and forgets them: another runtime writes them now. */
  discard(sessionIds: readonly string[]): void {
    const excluded = new Map(sessionIds.map((sessionId) => [sessionId, true]));
    this.staged = without(this.staged, excluded);
    for (const sessionId of sessionIds) this.forget(sessionId);
  }

  /** A deleted session's counter goes with it (and a failure: what is stored of it is all there is). */
  forget(sessionId: string): void {
    this.lastSeq.delete(sessionId);
    this.failed.delete(sessionId);
  }

  /**
   * Adds background output to the current batch. It is committed on the next tick after a quiet
   * spell, otherwise within the coalescing window; a batch that ends a run is committed at once
   * (nobody should wait for a run's end).
   */
  stage(change: Change): void {
    addChange(this.staged, change);
    this.schedule(change.events.some((staged) => staged.body.type === 'run.completed'));
  }

  /**
   * A streamed text or thinking delta with its session's record after it: staged like a change of
   * that one event (joined into the block's waiting event when there is one), without building a
   * change for each of a turn's thousands of deltas.
   */
  stageDelta(staged: StagedEvent, session: SessionRecord): void {
    addStagedEvent(this.staged.events, staged);
    this.staged.sessions.set(session.sessionId, session);
    this.schedule(false);
  }

  /**
   * Commits what is staged once the output in hand is staged, not at the coalescing window: the
   * agent finished a message, and its last text should not wait for more that is not coming.
   */
  flushSoon(): void {
    if (!isEmpty(this.staged)) this.schedule(true);
  }

  private schedule(urgent: boolean): void {
    if (this.scheduledFlush && !urgent) return;
    this.scheduledFlush?.cancel();
    if (urgent) {
      // Once the output in hand is staged (the rest of the read that brought the run's end), not a
      // turn of the event loop later: someone waits for the end.
      let cancelled = false;
      queueMicrotask(() => {
        if (!cancelled) void this.flush();
      });
      this.scheduledFlush = {
        cancel: () => {
          cancelled = true;
        },
      };
      return;
    }
    const wait = coalesceMs - (performance.now() - this.lastFlushAt);
    if (wait <= 0) {
      const immediate = setImmediate(() => void this.flush());
      this.scheduledFlush = { cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(() => void this.flush(), wait);
      this.scheduledFlush = { cancel: () => clearTimeout(timer) };
    }
  }

  /**
   * For a shutdown: from now on a background unit the store refuses is dropped after that attempt
   * (the store's own retries, ~10 s for a lost connection, still apply), so a stopping runtime is not
   * held by a store that is down for one attempt after another; a runtime started later ends those runs.
   */
  makeLastAttempts(): void {
    this.lastAttempts = true;
  }

  /** Commits everything staged so far; resolves once it is stored and published. */
  flush(): Promise<void> {
    this.scheduledFlush?.cancel();
    this.scheduledFlush = null;
    const draft = this.takeStaged();
    if (!draft)
      return this.chain.then(
        () => undefined,
        () => undefined,
      );
    // The window counts from the last commit that wrote something.
    this.lastFlushAt = performance.now();
    return this.enqueue(draft, 'background').then(
      () => undefined,
      () => undefined,
    );
  }

  /**
   * Commits one command's effects as one transaction, after everything staged before it.
   * Rejects (with nothing written) if the store refuses it.
   */
  commit(change: Change, receipts: readonly StoredReceipt[]): Promise<ProtocolEvent[]> {
    const before = this.takeStaged();
    if (before) void this.enqueue(before, 'background');
    const draft = emptyDraft();
    addChange(draft, change);
    draft.receipts.push(...receipts);
    return this.enqueue(draft, 'command');
  }

  /**
   * Commits the change that makes a failed session's log consistent again, once (after whatever
   * was staged before it); on success the session is written normally again. Rejects if the
   * store refuses it, and the session stays failed.
   */
  repair(change: Change): Promise<ProtocolEvent[]> {
    const before = this.takeStaged();
    if (before) void this.enqueue(before, 'background');
    const draft = emptyDraft();
    addChange(draft, change);
    return this.enqueue(draft, 'repair');
  }

  private takeStaged(): Draft | null {
    const draft = this.staged;
    if (isEmpty(draft)) return null;
    this.staged = emptyDraft();
    return draft;
  }

  private enqueue(draft: Draft, kind: WriteKind): Promise<ProtocolEvent[]> {
    const result = this.chain.then(() =>
      kind === 'background' ? this.writeWithRetries(draft) : this.write(draft, kind),
    );
    this.chain = result.catch(() => undefined);
    return result;
  }

  private async writeWithRetries(unit: Draft): Promise<ProtocolEvent[]> {
    let draft = unit;
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.write(draft, 'background');
      } catch (error) {
        const lost = lostSessionsOf(error);
        const rest = lost.length === 0 ? draft : without(draft, new Map(lost.map((sessionId) => [sessionId, true])));
        if (sessionIdsOf(rest).size < sessionIdsOf(draft).size) {
          // The lost sessions' output can never be written; the others' is written without it, now.
          draft = rest;
          attempt -= 1;
          continue;
        }
        const delay = this.lastAttempts ? undefined : backgroundRetryDelaysMs[attempt];
        if (delay === undefined) {
          const failure = AgentError.isInstance(error)
            ? error
            : new AgentError({
                code: 'store_failure',
                message:
                  'Events could not be stored; they were dropped after retries. Check the data directory (disk space, permissions).',
                cause: error,
              });
          const sessionIds = [...sessionIdsOf(draft)].filter((sessionId) => !this.failed.has(sessionId));
          for (const sessionId of sessionIds) this.failed.set(sessionId, failure);
          this.options.onDropped(sessionIds, failure);
          return [];
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private async write(unfiltered: Draft, kind: WriteKind): Promise<ProtocolEvent[]> {
    const draft = this.failed.size > 0 && kind !== 'repair' ? this.withoutFailed(unfiltered, kind) : unfiltered;
    if (isEmpty(draft)) return [];
    const next = new Map<string, number>();
    const events = draft.events.map((staged) => {
      const seq = (next.get(staged.sessionId) ?? this.lastSeqOf(staged.sessionId)) + 1;
      next.set(staged.sessionId, seq);
      return { ...staged.body, sessionId: staged.sessionId, seq, at: staged.at } as ProtocolEvent;
    });
    const sessions = [...draft.sessions.values()].map((session) => ({
      ...session,
      lastSeq: next.get(session.sessionId) ?? this.lastSeqOf(session.sessionId),
    }));
    try {
      await this.options.store.commit({
        events,
        sessions,
        runs: [...draft.runs.values()],
        interactions: [...draft.interactions.values()],
        receipts: draft.receipts,
        blobs: draft.blobs,
      });
    } catch (error) {
      const lost = lostSessionsOf(error);
      if (lost.length > 0) {
        this.discard(lost);
        this.options.onLeaseLost?.(lost);
      }
      if (AgentError.isInstance(error)) throw error;
      throw new AgentError({
        code: 'store_failure',
        message:
          'The store could not write the change; nothing was written. Check the data directory (disk space, permissions) and retry.',
        cause: error,
      });
    }
    for (const [sessionId, seq] of next) this.lastSeq.set(sessionId, seq);
    if (kind === 'repair') for (const sessionId of sessionIdsOf(draft)) this.failed.delete(sessionId);
    if (events.length > 0) this.options.onCommitted(events);
    return events;
  }

  /** Background output of a failed session is dropped; a command on one is refused, with nothing written. */
  private withoutFailed(draft: Draft, kind: WriteKind): Draft {
    if (kind === 'command') {
      for (const sessionId of sessionIdsOf(draft)) {
        const failure = this.failed.get(sessionId);
        if (failure) throw failure;
      }
      return draft;
    }
    return without(draft, this.failed);
  }
}
