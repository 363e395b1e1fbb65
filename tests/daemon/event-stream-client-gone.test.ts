// A client that leaves while its event stream is still being set up (the daemon reading the session's
// start position from its store, slow for a closed session on PostgreSQL) must not leave a stream
// behind: one that is never ended holds a subscriber slot until the daemon restarts, and enough of
// them refuse every new stream (429 too_many_streams).
import http from 'node:http';
import type { TetherStore } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { describe, expect, it } from 'vitest';
import { daemonPerTest, openEventStream, openSession, sseFrames } from './daemon-test-helpers.js';

const fixture = daemonPerTest();

/** The store, its reads of a session held (while `held` names it) until the test lets them go. */
function storeHoldingReads(store: TetherStore) {
  const held = new Set<string>();
  let entered = () => {};
  const reading = new Promise<void>((resolve) => {
    entered = resolve;
  });
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const holding = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property !== 'getSession') return typeof value === 'function' ? value.bind(target) : value;
      return async (sessionId: string) => {
        if (held.has(sessionId)) {
          entered();
          await released;
        }
        return target.getSession(sessionId);
      };
    },
  });
  return { store: holding, held, reading, release };
}

async function subscribers(daemon: { url: string; token: string }): Promise<number> {
  const response = await fetch(`${daemon.url}/v1/metrics`, { headers: { authorization: `Bearer ${daemon.token}` } });
  return Number(/^tether_subscribers (\d+)$/m.exec(await response.text())?.[1]);
}

describe('an event stream whose client left while it was set up', () => {
  it('is not kept: the subscriber count comes back, and new streams open', async () => {
    const { environment, daemon: first, api } = await fixture.start();
    const sessionId = await openSession(api, environment.workspace);
    await api.command({ type: 'close_session', sessionId });
    await first.close();
    // In a daemon started since, a closed session's snapshot comes from the store: its read is held.
    let holding: ReturnType<typeof storeHoldingReads> | undefined;
    const daemon = await fixture.daemonOn(environment, {
      openStore: async (dataDir) => {
        holding = storeHoldingReads(await openSqliteStore({ dataDir }));
        holding.held.add(sessionId);
        return holding.store;
      },
    });

    const url = new URL(`${daemon.url}/v1/sessions/${sessionId}/events`);
    const leaving = http.get(url, { headers: { authorization: `Bearer ${daemon.token}` } });
    leaving.on('error', () => undefined);
    await holding!.reading;
    const gone = new Promise((resolve) => leaving.once('close', resolve));
    leaving.destroy();
    await gone;
    // A request answered after the client's leaving reached the daemon: its end is seen by now.
    await fetch(`${daemon.url}/health`);
    holding!.held.delete(sessionId);
    holding!.release();

    // A stream opened and read after the first one's setup had ended is the only one counted.
    const frames = sseFrames((await openEventStream(daemon, sessionId)).body!);
    expect((await frames.next()).done).toBe(false);
    expect(await subscribers(daemon)).toBe(1);
    await frames.return(undefined);
  });
});
