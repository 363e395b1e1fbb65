// @tether/client against a real daemon whose store cannot read a session's events: each event stream
// it opens is accepted and then ends at once, without one event, with the store's error as its last
// frame. A subscription must not take that for a healthy stream and reconnect for ever: with
// maxAttempts it gives up with that error.
import { createTetherClient } from '@tether/client';
import { AgentError } from '@tether/protocol';
import type { TetherStore } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { agentErrorOf } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { SocketClient, daemonPerTest } from './daemon-test-helpers.js';

const fixture = daemonPerTest();

/**
 * The store, with reads of one session's events failing once `failing` holds its id, and counted;
 * past `giveUpAfter` of them `onTooMany` is called (a subscription that never gives up is stopped).
 */
function storeFailingReads(store: TetherStore, giveUpAfter: number, onTooMany: () => void) {
  const failing = new Set<string>();
  let failedReads = 0;
  const watched = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property !== 'readEvents') return typeof value === 'function' ? value.bind(target) : value;
      return async (sessionId: string, options: Parameters<TetherStore['readEvents']>[1]) => {
        if (!failing.has(sessionId)) return target.readEvents(sessionId, options);
        failedReads += 1;
        if (failedReads > giveUpAfter) onTooMany();
        throw new AgentError({ code: 'store_failure', message: 'The disk is gone.', retryable: true });
      };
    },
  });
  return { store: watched, failing, failedReads: () => failedReads };
}

/** A daemon with one open session, every read of whose events its store fails from now on. */
async function sessionWhoseReadsFail() {
  let watched: ReturnType<typeof storeFailingReads> | undefined;
  const { environment, daemon } = await fixture.start({
    openStore: async (dataDir) => {
      watched = storeFailingReads(await openSqliteStore({ dataDir }), 50, () => undefined);
      return watched.store;
    },
  });
  const client = createTetherClient({ url: daemon.url, token: daemon.token });
  const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  watched!.failing.add(sessionId);
  return { daemon, sessionId };
}

describe('@tether/client and a daemon whose store fails the reads of a stream', () => {
  it("gives up after maxAttempts streams that opened and ended without an event, with the store's error", async () => {
    let watched: ReturnType<typeof storeFailingReads> | undefined;
    // A subscription that took each of these streams for a healthy one would go on for ever: stopped well past its limit.
    const stop = new AbortController();
    const { environment, daemon } = await fixture.start({
      openStore: async (dataDir) => {
        watched = storeFailingReads(await openSqliteStore({ dataDir }), 50, () => stop.abort());
        return watched.store;
      },
    });
    const client = createTetherClient({
      url: daemon.url,
      token: daemon.token,
      reconnect: { initialDelayMs: 1, maxDelayMs: 5, maxAttempts: 3 },
    });
    const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    watched!.failing.add(sessionId);

    const subscribed = (async () => {
      for await (const _event of client.subscribe(sessionId, { signal: stop.signal })) {
        // None comes: every read of the session's events fails.
      }
    })();
    const error = await agentErrorOf(subscribed);
    expect(error).toMatchObject({ code: 'store_failure', message: 'The disk is gone.', retryable: true });
    // The first stream and its maxAttempts reconnections, each refused by the store once.
    expect(watched!.failedReads()).toBe(4);
  });

  it('ends the stream with `event: error` and the error, not silently', async () => {
    const { daemon, sessionId } = await sessionWhoseReadsFail();
    const response = await fetch(`${daemon.url}/v1/sessions/${sessionId}/events`, {
      headers: { authorization: `Bearer ${daemon.token}`, accept: 'text/event-stream' },
    });
    expect(response.status).toBe(200);
    // The stream ends after its one frame: the body is read whole.
    expect(await response.text()).toBe(
      `event: error\ndata: ${JSON.stringify({ error: { code: 'store_failure', message: 'The disk is gone.', retryable: true } })}\n\n`,
    );
  });

  it('ends a WebSocket subscription with `unsubscribed` and the error, not silently', async () => {
    const { daemon, sessionId } = await sessionWhoseReadsFail();
    const socket = await SocketClient.connect(daemon);
    try {
      socket.send({ type: 'subscribe', id: 's1', sessionId, afterSeq: 0 });
      expect(await socket.waitFor((frame) => frame.type === 'unsubscribed')).toEqual({
        type: 'unsubscribed',
        id: null,
        sessionId,
        error: { code: 'store_failure', message: 'The disk is gone.', retryable: true },
      });
    } finally {
      socket.close();
    }
  });
});
