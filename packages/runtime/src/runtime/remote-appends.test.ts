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
  return { remote, resync: () => noticed('resync'), gone, errors };
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
});
