// @tether/client against a real daemon whose event streams are full: it refuses a new one with
// 429 too_many_streams and Retry-After. The subscription waits as long as it was told before it
// asks again (at most reconnect.maxDelayMs), instead of coming back at its own first backoff step.
import { createTetherClient } from '@tether/client';
import { describe, expect, it } from 'vitest';
import { daemonPerTest, openEventStream, openSession } from './daemon-test-helpers.js';

const fixture = daemonPerTest();

describe('@tether/client and a daemon whose streams are full', () => {
  it("waits the daemon's Retry-After (capped at maxDelayMs) before it asks for the stream again, then follows it", async () => {
    // 80% of 10 connections: 8 streams.
    const { environment, daemon, api } = await fixture.start({ maxConnections: 10 });
    const sessionId = await openSession(api, environment.workspace);
    const held = Array.from({ length: 8 }, () => new AbortController());
    for (const stream of held) await openEventStream(daemon, sessionId, { signal: stream.signal });

    const attempts: Array<{ at: number; answeredAt?: number; status?: number }> = [];
    let refused!: () => void;
    const firstRefusal = new Promise<void>((resolve) => {
      refused = resolve;
    });
    const maxDelayMs = 600;
    const client = createTetherClient({
      url: daemon.url,
      token: daemon.token,
      reconnect: { initialDelayMs: 10, maxDelayMs },
      fetch: async (input, init) => {
        const attempt: { at: number; answeredAt?: number; status?: number } = { at: performance.now() };
        if (String(input).includes('/events')) attempts.push(attempt);
        const response = await fetch(input, init);
        attempt.status = response.status;
        attempt.answeredAt = performance.now();
        if (response.status === 429) refused();
        return response;
      },
    });
    const stop = new AbortController();
    const events = client.subscribe(sessionId, { signal: stop.signal })[Symbol.asyncIterator]();
    const first = events.next();
    await firstRefusal;
    // A place frees up at once: only the Retry-After keeps the client from taking it at its next step.
    held[0]!.abort();
    expect((await first).value).toMatchObject({ seq: 1, type: 'session.opened' });
    stop.abort();
    for (const stream of held) stream.abort();

    expect(attempts[0]!.status).toBe(429);
    expect(attempts.at(-1)!.status).toBe(200);
    // Retry-After: 5 s, capped at maxDelayMs: the next ask came no sooner (timers never fire early).
    expect(attempts[1]!.at - attempts[0]!.answeredAt!).toBeGreaterThanOrEqual(maxDelayMs);
    expect(attempts).toHaveLength(2);
  });
});
