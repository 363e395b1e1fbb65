import type { AppendNotice } from '@tether/runtime';
import { describe, expect, it } from 'vitest';
import {
  diagnosticEvents as eventsOf,
  noticeListeners as listeners,
  query,
  unitOf,
  useStores,
} from './__fixtures__/database-fixtures.js';
import { useTestServer } from './__fixtures__/test-server.js';
import { openPostgresStore } from './index.js';

// Two stores standing for two daemons on one database: what one appends, the other hears of.
const server = useTestServer();
const openShared = useStores();
const openStore = (url: string, ownerId: string) => openShared({ url, maxConnections: 2, ownerId });

const first = `ses_${'a'.repeat(32)}`;
const second = `ses_${'b'.repeat(32)}`;

describe('PostgreSQL store: append notices', () => {
  it("tells another store of each commit's sessions and last seqs, in commit order", async () => {
    const url = await server().createDatabase();
    const [writer, follower] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    const heard: (AppendNotice | 'resync')[] = [];
    follower.coordination.onAppended((notice) => heard.push(notice));
    await expect.poll(() => listeners(url), { timeout: 10_000, interval: 20 }).toHaveLength(1);

    await writer.commit(unitOf(eventsOf(first, 1, 2)));
    await writer.commit(unitOf([...eventsOf(second, 1, 1), ...eventsOf(first, 3, 3)]));
    await writer.commit(unitOf(eventsOf(second, 2, 4)));
    // A commit without events notifies nothing.
    await writer.commit(unitOf([]));
    const expected = [
      { sessionId: first, seq: 2 },
      { sessionId: first, seq: 3 },
      { sessionId: second, seq: 1 },
      { sessionId: second, seq: 4 },
    ];
    // The first LISTEN says resync (nothing before it was heard); then, within one commit, sessions
    // come in id order, and commits in the order they committed.
    await expect.poll(() => heard.length, { timeout: 10_000, interval: 20 }).toBe(expected.length + 1);
    expect(heard).toEqual(['resync', ...expected]);
  });

  it('says resync when its connection is ended, then hears notices again', async () => {
    const url = await server().createDatabase();
    const [writer, follower] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    const heard: (AppendNotice | 'resync')[] = [];
    const stopHearing = follower.coordination.onAppended((notice) => heard.push(notice));
    await expect.poll(() => listeners(url), { timeout: 10_000, interval: 20 }).toHaveLength(1);
    await writer.commit(unitOf(eventsOf(first, 1, 1)));
    await expect.poll(() => heard, { timeout: 10_000, interval: 20 }).toEqual(['resync', { sessionId: first, seq: 1 }]);

    const [listener] = await listeners(url);
    await query(url, 'SELECT pg_terminate_backend($1)', [listener]);
    await expect.poll(() => heard.lastIndexOf('resync'), { timeout: 10_000, interval: 20 }).toBe(2);
    await writer.commit(unitOf(eventsOf(first, 2, 2)));
    await expect
      .poll(() => heard.slice(heard.lastIndexOf('resync')), { timeout: 10_000, interval: 20 })
      .toEqual(['resync', { sessionId: first, seq: 2 }]);
    expect(await listeners(url)).not.toContain(listener);

    // A listener removed hears nothing more; another one still does.
    const other: (AppendNotice | 'resync')[] = [];
    follower.coordination.onAppended((notice) => other.push(notice));
    stopHearing();
    const before = heard.length;
    await writer.commit(unitOf(eventsOf(first, 3, 3)));
    await expect.poll(() => other, { timeout: 10_000, interval: 20 }).toEqual([{ sessionId: first, seq: 3 }]);
    expect(heard).toHaveLength(before);
  });

  it('ends its notice connection when the store closes', async () => {
    const url = await server().createDatabase();
    const follower = await openPostgresStore({ url, ownerId: 'daemon-b' });
    follower.coordination?.onAppended(() => undefined);
    await expect.poll(() => listeners(url), { timeout: 10_000, interval: 20 }).toHaveLength(1);
    await follower.close();
    await expect.poll(() => listeners(url), { timeout: 10_000, interval: 20 }).toEqual([]);
  });
});
