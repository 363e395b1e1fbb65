import { type ConnectionState, type SubscribeOptions, type TetherClient, createTetherClient } from '@tether/client';
import { readDaemonInfo, readToken } from '@tether/daemon';
import type { ProtocolEvent } from '@tether/protocol';

export interface DataDirDaemon {
  readonly dataDir: string;
  readonly environment: Readonly<Record<string, string | undefined>>;
}

/** A client and the address it talks to now. */
export interface MovableClient {
  readonly client: TetherClient;
  url(): string;
}

/**
 * A client of the data dir's own daemon wherever it listens now. A daemon started again on another
 * port (`--port 0`, or its port taken meanwhile) writes its address to daemon.json; a subscription
 * whose stream broke reads that file on each attempt and goes on at the new address from the last seq
 * it yielded, and calls made after that go there too. Without this, a `tether run` whose daemon was
 * restarted elsewhere would wait on the old address for ever.
 */
export function dataDirDaemonClient(url: string, token: string, daemon: DataDirDaemon): MovableClient {
  let current = { url, client: createTetherClient({ url, token }) };
  // One look at a time: every broken subscription asks on each of its attempts.
  let looking: Promise<void> | null = null;
  const lookForMove = (): Promise<void> => {
    looking ??= (async () => {
      const info = await readDaemonInfo(daemon.dataDir).catch(() => null);
      if (info === null || info.url === current.url) return;
      const tokenNow = daemon.environment.TETHER_TOKEN ?? (await readToken(daemon.dataDir).catch(() => null)) ?? token;
      current = { url: info.url, client: createTetherClient({ url: info.url, token: tokenNow }) };
    })().finally(() => {
      looking = null;
    });
    return looking;
  };

  async function* subscribe(sessionId: string, options: SubscribeOptions = {}): AsyncGenerator<ProtocolEvent> {
    let afterSeq = options.afterSeq;
    for (;;) {
      const following = current.client;
      const moved = new AbortController();
      const signal = options.signal === undefined ? moved.signal : AbortSignal.any([options.signal, moved.signal]);
      const onConnectionChange = (state: ConnectionState) => {
        options.onConnectionChange?.(state);
        if (state !== 'reconnecting') return;
        void lookForMove().then(() => {
          if (current.client !== following) moved.abort();
        });
      };
      const events = following.subscribe(sessionId, {
        ...options,
        ...(afterSeq === undefined ? {} : { afterSeq }),
        signal,
        onConnectionChange,
      });
      for await (const event of events) {
        afterSeq = event.seq;
        yield event;
      }
      if (!moved.signal.aborted || options.signal?.aborted === true) return;
    }
  }

  const calls = Object.fromEntries(
    Object.entries(current.client).map(([name, value]) => [
      name,
      typeof value === 'function'
        ? (...args: unknown[]) =>
            (current.client as unknown as Record<string, (...a: unknown[]) => unknown>)[name]!(...args)
        : value,
    ]),
  ) as unknown as TetherClient;
  return { client: { ...calls, subscribe }, url: () => current.url };
}
