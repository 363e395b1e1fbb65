import { describe, expect, it, vi } from 'vitest';
import { createInMemoryStore } from '../store/in-memory-store.js';
import type { AppendNotice, SessionCoordination } from '../store/session-coordination.js';
import type { TetherStore } from '../store/tether-store.js';
import { RemoteAppends } from './remote-appends.js';

const sessionId = `ses_${'1'.repeat(32)}`;

/** A store whose first `failures` reads of a session fail (a connection broken with the notices'), then read it as gone. */
function storeFailingFirst(failures: number): TetherStore {
  const store = createInMemoryStore();
  let failed = 0;
  return Object.assign(Object.create(store) as TetherStore, {
    getSession: async (id: string) => {
      if (failed < failures) {
        failed += 1;
        throw new Error('Connection terminated unexpectedly');
      }
      return store.getSession(id);
    },
  });
}

/**
 * A store whose session is there until `remove()`, and whose reads of events wait for `release()`:
 * a read under way while notices are missed.
 */
function storeReadingSlowly() {
  let removed = false;
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let readsStarted = 0;
  const store = Object.assign(Object.create(createInMemoryStore()) as TetherStore, {
    getSession: async () => (removed ? undefined : { sessionId, lastSeq: 5 }),
    readEvents: async () => {
      readsStarted += 1;
      await released;
      return [];
    },
  });
  return {
    store,
    remove: () => {
      removed = true;
    },
    release,
    readsStarted: () => readsStarted,
  };
}

function remoteAppends(store: TetherStore) {
  let noticed: (notice: AppendNotice | 'resync') => void = () => {};
  const coordination = {
    onAppended: (listener: (notice: AppendNotice | 'resync') => void) => {
      noticed = listener;
      return () => {};
    },
    onDeleted: () => () => {},
  } as unknown as SessionCoordination;
  const gone: string[] = [];
  const errors: unknown[] = [];
  const remote = new RemoteAppends({
    store,
    coordination,
    isResident: () => false,
    isWatched: (id) => id === sessionId,
    watchedSessions: () => [sessionId],
    publish: () => {},
    mayHaveMissed: () => {},
    gone: (id) => gone.push(id),
    onError: (error) => errors.push(error),
  });
  return {
    remote,
    notice: (seq: number) => noticed({ sessionId, seq }),
    resync: () => noticed('resync'),
    gone,
    errors,
  };
}

describe('RemoteAppends after missed notices', () => {
  it('tries a failed read of a followed session again, so a deletion it missed is still found', async () => {
    const { remote, resync, gone, errors } = remoteAppends(storeFailingFirst(2));
    try {
      resync();
      await vi.waitFor(() => expect(gone).toEqual([sessionId]), { timeout: 5_000, interval: 10 });
      expect(errors).toHaveLength(2);
    } finally {
      remote.stop();
    }
  });

  it('looks for the session again when notices were missed during a read under way, so a deletion then is found', async () => {
    const slow = storeReadingSlowly();
    const { remote, notice, resync, gone } = remoteAppends(slow.store);
    try {
      notice(5);
      await vi.waitFor(() => expect(slow.readsStarted()).toBe(1), { timeout: 5_000, interval: 10 });
      // Deleted while the notice connection was down: only the resync tells, while the read is under way.
      slow.remove();
      resync();
      slow.release();
      await vi.waitFor(() => expect(gone).toEqual([sessionId]), { timeout: 5_000, interval: 10 });
    } finally {
      remote.stop();
    }
  });
});
