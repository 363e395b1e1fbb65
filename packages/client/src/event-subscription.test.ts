import { AgentError, newSessionId } from '@tether/protocol';
import type { ProtocolEvent } from '@tether/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTetherClient } from './index.js';
import type { TetherClient } from './index.js';
import { type FakeDaemon, startFakeDaemon } from './test-support/fake-daemon.js';
import { sampleEventBody, sampleSnapshot, withEnvelope } from './test-support/sample-records.js';
import { startSilentServer } from './test-support/silent-server.js';

/** Time passing with nothing on the stream: what the silence limit is about (not a wait for something to happen). */
const quietFor = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

/** The seqs of the next `count` events; fails if the iteration ends first. */
async function takeSeqs(iterator: AsyncIterator<ProtocolEvent>, count: number): Promise<number[]> {
  const seqs: number[] = [];
  while (seqs.length < count) {
    const next = await iterator.next();
    if (next.done) throw new Error(`the subscription ended after ${seqs.join(', ')}`);
    seqs.push(next.value.seq);
  }
  return seqs;
}

async function iterationError(iterator: AsyncIterator<ProtocolEvent>): Promise<AgentError> {
  for (;;) {
    let next: IteratorResult<ProtocolEvent>;
    try {
      next = await iterator.next();
    } catch (error) {
      if (AgentError.isInstance(error)) return error;
      throw error;
    }
    if (next.done) throw new Error('the subscription ended without an error');
  }
}

describe('TetherClient.subscribe', () => {
  let daemon: FakeDaemon;
  let client: TetherClient;
  let sessionId: string;
  const controller = () => new AbortController();

  const append = (count: number, options?: { live?: boolean }) => {
    for (let index = 0; index < count; index += 1) daemon.append(sessionId, sampleEventBody(), options);
  };
  const open = (afterSeq?: number, signal?: AbortSignal) =>
    client
      .subscribe(sessionId, { ...(afterSeq === undefined ? {} : { afterSeq }), ...(signal ? { signal } : {}) })
      [Symbol.asyncIterator]();

  beforeEach(async () => {
    daemon = await startFakeDaemon();
    client = createTetherClient({
      url: daemon.url,
      token: daemon.token,
      reconnect: { initialDelayMs: 1, maxDelayMs: 5 },
    });
    sessionId = sampleSnapshot().sessionId;
    daemon.addSession(sampleSnapshot({ sessionId }));
  });
  afterEach(async () => {
    await daemon.close();
  });

  it('replays stored events after afterSeq, then streams live ones', async () => {
    append(3);
    const events = open(1);
    expect(await takeSeqs(events, 2)).toEqual([2, 3]);
    await daemon.waitFor(() => daemon.subscriberCount(sessionId) === 1);
    append(2);
    expect(await takeSeqs(events, 2)).toEqual([4, 5]);
    const [request] = daemon.eventRequests(sessionId);
    expect(request!.query.get('after')).toBe('1');
    expect(request!.headers.authorization).toBe(`Bearer ${daemon.token}`);
    expect(request!.headers['last-event-id']).toBeUndefined();
    await events.return?.();
  });

  it('resumes from the last seq with Last-Event-ID after the daemon cuts the stream mid-frame', async () => {
    append(3);
    const events = open();
    const seen = await takeSeqs(events, 3);
    append(2);
    seen.push(...(await takeSeqs(events, 2)));
    // Event 6 is stored, but the stream breaks halfway through its frame: the half must not count.
    const sixth = daemon.append(sessionId, sampleEventBody(), { live: false });
    const frame = `id: 6\ndata: ${JSON.stringify(sixth)}\n\n`;
    daemon.drop(sessionId, frame.slice(0, frame.length / 2));
    append(1, { live: false });
    seen.push(...(await takeSeqs(events, 2)));
    await daemon.waitFor(() => daemon.subscriberCount(sessionId) === 1);
    append(1);
    seen.push(...(await takeSeqs(events, 1)));

    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const requests = daemon.eventRequests(sessionId);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers['last-event-id']).toBe('5');
    expect(requests[1]!.query.get('after')).toBe('5');
    await events.return?.();
  });

  it('drops duplicates when a daemon replays what was already yielded', async () => {
    daemon.replayFromStart = true;
    append(3);
    const events = open();
    expect(await takeSeqs(events, 3)).toEqual([1, 2, 3]);
    daemon.drop(sessionId);
    append(1, { live: false });
    expect(await takeSeqs(events, 1)).toEqual([4]);
    await events.return?.();
  });

  it('reconnects from the last yielded seq when it sees a gap', async () => {
    append(2);
    const events = open();
    expect(await takeSeqs(events, 2)).toEqual([1, 2]);
    append(1, { live: false });
    append(1);
    expect(await takeSeqs(events, 2)).toEqual([3, 4]);
    const requests = daemon.eventRequests(sessionId);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers['last-event-id']).toBe('2');
    await events.return?.();
  });

  it('reconnects straight away after an overflow', async () => {
    // The default schedule: overflow must not wait for it.
    client = createTetherClient({ url: daemon.url, token: daemon.token, reconnect: { initialDelayMs: 60_000 } });
    append(2);
    const events = open();
    expect(await takeSeqs(events, 2)).toEqual([1, 2]);
    daemon.overflow(sessionId);
    append(2);
    expect(await takeSeqs(events, 2)).toEqual([3, 4]);
    const requests = daemon.eventRequests(sessionId);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.headers['last-event-id']).toBe('2');
    await events.return?.();
  }, 10_000);

  it('ignores ping comments', async () => {
    append(1);
    const events = open();
    expect(await takeSeqs(events, 1)).toEqual([1]);
    daemon.ping(sessionId);
    append(1);
    daemon.ping(sessionId);
    append(1);
    expect(await takeSeqs(events, 2)).toEqual([2, 3]);
    expect(daemon.eventRequests(sessionId)).toHaveLength(1);
    await events.return?.();
  });

  it('tells when a stream opens and when it is reconnecting after a break', async () => {
    const states: string[] = [];
    append(2);
    const events = client
      .subscribe(sessionId, { onConnectionChange: (state) => states.push(state) })
      [Symbol.asyncIterator]();
    expect(await takeSeqs(events, 2)).toEqual([1, 2]);
    expect(states).toEqual(['open']);
    daemon.failSubscriptions(503, 1);
    daemon.drop(sessionId);
    append(1, { live: false });
    expect(await takeSeqs(events, 1)).toEqual([3]);
    expect(states).toEqual(['open', 'reconnecting', 'reconnecting', 'open']);
    await events.return?.();
  });

  it('retries 5xx answers with backoff', async () => {
    daemon.failSubscriptions(503, 2);
    append(2);
    const events = open();
    expect(await takeSeqs(events, 2)).toEqual([1, 2]);
    expect(daemon.eventRequests(sessionId)).toHaveLength(3);
    await events.return?.();
  });

  it('ends promptly when the signal aborts while waiting for a live event, and closes the stream', async () => {
    append(1);
    const abort = controller();
    const events = open(0, abort.signal);
    expect(await takeSeqs(events, 1)).toEqual([1]);
    const pending = events.next();
    abort.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
    await daemon.waitFor(() => daemon.subscriberCount(sessionId) === 0);
  }, 5_000);

  it('yields nothing more after the signal aborts, even of events that came in the same chunk', async () => {
    append(1);
    const abort = controller();
    const events = open(0, abort.signal);
    expect(await takeSeqs(events, 1)).toEqual([1]);
    const frames = [2, 3, 4].map(
      (seq) => `id: ${seq}\ndata: ${JSON.stringify(withEnvelope(sessionId, seq, sampleEventBody()))}\n\n`,
    );
    daemon.writeRaw(sessionId, frames.join(''));
    expect(await takeSeqs(events, 1)).toEqual([2]);
    abort.abort();
    expect(await events.next()).toEqual({ done: true, value: undefined });
    await daemon.waitFor(() => daemon.subscriberCount(sessionId) === 0);
  });

  it('return() while a next() waits for a live event ends both at once and closes the stream', async () => {
    append(1);
    const events = open(0);
    expect(await takeSeqs(events, 1)).toEqual([1]);
    const pending = events.next();
    await daemon.waitFor(() => daemon.subscriberCount(sessionId) === 1);
    const returned = events.return?.();
    expect(await pending).toEqual({ done: true, value: undefined });
    expect(await returned).toEqual({ done: true, value: undefined });
    await daemon.waitFor(() => daemon.subscriberCount(sessionId) === 0);
  }, 5_000);

  it('ends promptly when the signal aborts during a reconnection delay', async () => {
    client = createTetherClient({ url: daemon.url, token: daemon.token, reconnect: { initialDelayMs: 60_000 } });
    daemon.failSubscriptions(503, 100);
    const abort = controller();
    const events = open(0, abort.signal);
    const pending = events.next();
    await daemon.waitFor(() => daemon.eventRequests(sessionId).length === 1);
    abort.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  }, 5_000);

  it('makes no request when the signal is already aborted', async () => {
    const abort = controller();
    abort.abort();
    expect(await open(0, abort.signal).next()).toEqual({ done: true, value: undefined });
    expect(daemon.eventRequests(sessionId)).toHaveLength(0);
  });

  it('closes the stream when the consumer stops iterating', async () => {
    append(3);
    for await (const event of client.subscribe(sessionId)) if (event.seq === 2) break;
    await daemon.waitFor(() => daemon.subscriberCount(sessionId) === 0);
  });

  it.each([
    ['not JSON', () => 'id: 2\ndata: {"type":\n\n'],
    [
      'not a protocol event',
      () => `id: 2\ndata: ${JSON.stringify({ type: 'run.exploded', sessionId, seq: 2, at: 'now' })}\n\n`,
    ],
    [
      'of another session',
      () => `id: 2\ndata: ${JSON.stringify(withEnvelope(newSessionId(), 2, sampleEventBody()))}\n\n`,
    ],
    [
      'with an id that is not its seq',
      () => `id: 9\ndata: ${JSON.stringify(withEnvelope(sessionId, 2, sampleEventBody()))}\n\n`,
    ],
  ])('throws on an event %s, without reconnecting', async (_, frame) => {
    append(1);
    const events = open();
    expect(await takeSeqs(events, 1)).toEqual([1]);
    daemon.writeRaw(sessionId, frame());
    const error = await iterationError(events);
    expect(error).toMatchObject({ code: 'internal_error', details: { reason: 'invalid_response' } });
    expect(error.message).toContain('same version');
    await daemon.waitFor(() => daemon.subscriberCount(sessionId) === 0);
    expect(daemon.eventRequests(sessionId)).toHaveLength(1);
  });

  it('throws unauthorized on 401 and session_not_found on 404, without retrying', async () => {
    const wrongToken = createTetherClient({ url: daemon.url, token: 'wrong' });
    const unauthorized = await iterationError(wrongToken.subscribe(sessionId)[Symbol.asyncIterator]());
    expect(unauthorized.code).toBe('unauthorized');
    const unknown = newSessionId();
    const missing = await iterationError(client.subscribe(unknown)[Symbol.asyncIterator]());
    expect(missing.code).toBe('session_not_found');
    expect(daemon.eventRequests(sessionId)).toHaveLength(1);
    expect(daemon.eventRequests(unknown)).toHaveLength(1);
  });

  it('gives up with runtime_stopped after maxAttempts failed reconnections', async () => {
    const stopped = await startFakeDaemon();
    await stopped.close();
    let calls = 0;
    const counting = createTetherClient({
      url: stopped.url,
      token: 't',
      fetch: (input, init) => {
        calls += 1;
        return fetch(input, init);
      },
      reconnect: { initialDelayMs: 1, maxAttempts: 2 },
    });
    const error = await iterationError(counting.subscribe(sessionId)[Symbol.asyncIterator]());
    expect(error).toMatchObject({ code: 'runtime_stopped', retryable: true });
    expect(error.message).toContain('is not reachable');
    expect(calls).toBe(3);
  });

  it('gives up saying the stream broke off (not that the daemon is unreachable) when each opened stream breaks at once', async () => {
    let calls = 0;
    const breaking = createTetherClient({
      url: daemon.url,
      token: daemon.token,
      fetch: async () => {
        calls += 1;
        const body = new ReadableStream<Uint8Array>({ pull: (stream) => stream.error(new Error('socket reset')) });
        return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      },
      reconnect: { initialDelayMs: 1, maxAttempts: 1 },
    });
    const error = await iterationError(breaking.subscribe(sessionId)[Symbol.asyncIterator]());
    expect(error).toMatchObject({ code: 'runtime_stopped', retryable: true, details: { reason: 'stream_broken' } });
    expect(error.message).toContain('broke off after it had opened');
    expect(error.message).not.toContain('not reachable');
    expect(calls).toBe(2);
  });

  it('reconnects from its last seq when the stream sends nothing, not even a ping, for the silence limit', async () => {
    client = createTetherClient({
      url: daemon.url,
      token: daemon.token,
      reconnect: { initialDelayMs: 1, maxDelayMs: 5, silenceLimitMs: 100 },
    });
    const states: string[] = [];
    append(2);
    const events = client
      .subscribe(sessionId, { onConnectionChange: (state) => states.push(state) })
      [Symbol.asyncIterator]();
    expect(await takeSeqs(events, 2)).toEqual([1, 2]);
    const next = events.next();
    await daemon.waitFor(() => daemon.eventRequests(sessionId).length === 2);
    expect(states.slice(0, 2)).toEqual(['open', 'reconnecting']);
    expect(daemon.eventRequests(sessionId)[1]!.headers['last-event-id']).toBe('2');
    append(1);
    expect((await next).value?.seq).toBe(3);
    await events.return?.();
  });

  it('keeps a quiet stream that the daemon pings', async () => {
    client = createTetherClient({ url: daemon.url, token: daemon.token, reconnect: { silenceLimitMs: 500 } });
    const states: string[] = [];
    append(1);
    const events = client
      .subscribe(sessionId, { onConnectionChange: (state) => states.push(state) })
      [Symbol.asyncIterator]();
    expect(await takeSeqs(events, 1)).toEqual([1]);
    const next = events.next();
    // Twice the limit in all, never more than a fifth of it without a ping.
    for (let ping = 0; ping < 20; ping += 1) {
      await quietFor(50);
      daemon.ping(sessionId);
    }
    append(1);
    expect((await next).value?.seq).toBe(2);
    expect(daemon.eventRequests(sessionId)).toHaveLength(1);
    expect(states).toEqual(['open']);
    await events.return?.();
  });

  it('does not count the time the consumer takes between events as silence', async () => {
    client = createTetherClient({ url: daemon.url, token: daemon.token, reconnect: { silenceLimitMs: 200 } });
    append(1);
    const events = open();
    expect(await takeSeqs(events, 1)).toEqual([1]);
    // Sent now, read only once the consumer asks: the client is not waiting on the stream meanwhile.
    append(1);
    await quietFor(500);
    expect(await takeSeqs(events, 1)).toEqual([2]);
    expect(daemon.eventRequests(sessionId)).toHaveLength(1);
    await events.return?.();
  });

  it('gives up with runtime_stopped stream_silent on a daemon that accepts and never answers', async () => {
    const hung = await startSilentServer();
    try {
      const states: string[] = [];
      const silent = createTetherClient({
        url: hung.url,
        token: 't',
        reconnect: { initialDelayMs: 1, maxAttempts: 1, silenceLimitMs: 50 },
      });
      const error = await iterationError(
        silent.subscribe(sessionId, { onConnectionChange: (state) => states.push(state) })[Symbol.asyncIterator](),
      );
      expect(error).toMatchObject({ code: 'runtime_stopped', retryable: true, details: { reason: 'stream_silent' } });
      expect(error.message).toBe(
        `The Tether daemon at ${hung.url} sent nothing on the event stream, not even a ping, for 50 ms; it may be hung. Check that \`tether serve\` answers (GET /health); if it pings less often (pingIntervalMs), raise reconnect.silenceLimitMs.`,
      );
      expect(states).toEqual(['reconnecting']);
      expect(hung.connections()).toBeGreaterThanOrEqual(2);
    } finally {
      await hung.close();
    }
  });

  it.each([
    ['negative', -1],
    ['not a whole number', 1.5],
    ['NaN', Number.NaN],
    ['a string', '3'],
  ])('refuses an afterSeq that is %s at the call, before any request', (_, afterSeq) => {
    expect(() => client.subscribe(sessionId, { afterSeq: afterSeq as number })).toThrow(
      expect.objectContaining({ code: 'invalid_command', details: { reason: 'invalid_start_seq' } }),
    );
    expect(() => client.subscribe(undefined as never)).toThrow(
      expect.objectContaining({ code: 'invalid_command', details: { reason: 'invalid_session_id' } }),
    );
    expect(daemon.requests).toHaveLength(0);
  });
});
