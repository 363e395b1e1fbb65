/**
 * The fan-out scenario's subscribers: each keeps when every event arrived (CLOCK_MONOTONIC), to be
 * set against when the daemon published it. Two kinds, the least a reader can do and the client.
 */
import http from 'node:http';
import { monotonicMs } from './monotonic-clock.mjs';

/** What a fan-out subscriber keeps: when each seq arrived (hrtime ms), how many run.completed it saw, waiters. */
class Receipts {
  constructor(afterSeq) {
    this.times = [];
    this.lastSeq = afterSeq;
    this.completed = 0;
    this.overflows = 0;
    this.waiters = new Set();
    this.ended = false;
    this.error = undefined;
  }

  check() {
    for (const waiter of this.waiters) {
      if (waiter.predicate()) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  waitUntil(predicate, timeoutMs = 60_000) {
    if (predicate()) return Promise.resolve();
    if (this.ended) return Promise.reject(this.error ?? new Error('the event stream ended'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`fan-out subscriber: timed out at seq ${this.lastSeq}`));
      }, timeoutMs);
      const waiter = {
        predicate,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waiters.add(waiter);
    });
  }

  end() {
    if (this.ended) return;
    this.ended = true;
    for (const waiter of this.waiters) waiter.reject(this.error ?? new Error('the event stream ended'));
    this.waiters.clear();
  }
}

/**
 * A raw SSE reader (node:http, no validation): records when the chunk holding each frame arrived
 * (hrtime), reading only the frame's `id:` line and whether it is a run.completed. About the least
 * a subscriber can do, so the figures are the daemon's, not the reader's.
 */
export class RawSubscriber extends Receipts {
  constructor({ url, token, sessionId, afterSeq, agent }) {
    super(afterSeq);
    this.buffer = '';
    this.stopping = false;
    this.request = http.get(`${url}/v1/sessions/${encodeURIComponent(sessionId)}/events?after=${afterSeq}`, {
      agent,
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    });
    this.request.on('response', (response) => {
      if (response.statusCode !== 200) {
        this.error = new Error(`SSE answered ${response.statusCode}`);
        response.resume();
        this.end();
        return;
      }
      response.setEncoding('utf8');
      response.on('data', (text) => this.onData(text));
      response.on('end', () => this.end());
      response.on('error', () => this.end());
    });
    this.request.on('error', (error) => {
      if (!this.stopping) this.error = error;
      this.end();
    });
  }

  onData(text) {
    const at = monotonicMs();
    this.buffer += text;
    let start = 0;
    for (let stop = this.buffer.indexOf('\n\n', start); stop !== -1; stop = this.buffer.indexOf('\n\n', start)) {
      const frame = this.buffer.slice(start, stop);
      start = stop + 2;
      if (frame.startsWith('id: ')) {
        const seq = Number(frame.slice(4, frame.indexOf('\n')));
        this.times[seq] = at;
        this.lastSeq = seq;
        if (frame.includes('"type":"run.completed"')) this.completed += 1;
      } else if (frame.startsWith('event: overflow')) this.overflows += 1;
    }
    this.buffer = this.buffer.slice(start);
    this.check();
  }

  stop() {
    this.stopping = true;
    this.request.destroy();
    this.end();
  }
}

/** A subscriber through @tether/client (fetch, SSE parser, every event validated): when it yields each event. */
export class ClientSubscriber extends Receipts {
  constructor({ client, sessionId, afterSeq }) {
    super(afterSeq);
    this.controller = new AbortController();
    this.done = (async () => {
      for await (const event of client.subscribe(sessionId, { afterSeq, signal: this.controller.signal })) {
        this.times[event.seq] = monotonicMs();
        this.lastSeq = event.seq;
        if (event.type === 'run.completed') this.completed += 1;
        this.check();
      }
    })()
      .catch((error) => {
        this.error = error;
      })
      .finally(() => this.end());
  }

  stop() {
    this.controller.abort();
  }
}
