import type { ServerResponse } from 'node:http';
import { AgentError, type ProtocolEvent, toAgentError } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import { BoundedOutbox, type OutboxFrame, type OutboxLimits } from '../streaming/bounded-outbox.js';
import type { LiveConnection } from '../streaming/connection-registry.js';
import { feedSession } from '../streaming/session-feed.js';
import { sseErrorFrame, sseEventFrame, sseOverflowFrame, ssePingFrame } from './sse-writer.js';

export type SseEndReason = 'client_gone' | 'overflow' | 'revoked' | 'shutdown' | 'session_gone' | 'failed';

export interface SseStreamOptions {
  readonly runtime: AgentRuntime;
  readonly sessionId: string;
  readonly afterSeq: number;
  readonly limits: OutboxLimits;
  readonly pingIntervalMs: number;
  /** The response, its head already sent: frames are written to it directly. */
  readonly response: ServerResponse;
  /** How long a closing stream may take to flush before its connection is destroyed. */
  readonly lingerMs?: number;
  readonly onEnd: (reason: SseEndReason, stats: { events: number; lastSeq: number }) => void;
}

// Frames are joined into chunks of about this size: fewer writes, same bytes.
const chunkBytes = 64 * 1024;

/**
 * One `GET /v1/sessions/:id/events` response. Frames wait in a bounded outbox and are written to
 * the socket only once it took the last chunk, so whatever the client does not read stays in the
 * outbox, and passing the bound ends the stream with `event: overflow`. The response is written
 * directly rather than through a web ReadableStream: with a hundred subscribers the stream
 * machinery cost more than the writes themselves (docs/benchmarks.md, daemon scenario).
 */
export class SseStream implements LiveConnection {
  private readonly options: SseStreamOptions;
  private readonly outbox: BoundedOutbox;
  private readonly abort = new AbortController();
  private readonly pingTimer: NodeJS.Timeout;
  private lingerTimer: NodeJS.Timeout | undefined;
  private lastQueuedSeq: number;
  private events = 0;
  private endReason: SseEndReason | null = null;
  private readonly closed: Promise<void>;
  private markClosed!: () => void;

  constructor(options: SseStreamOptions) {
    this.options = options;
    this.outbox = new BoundedOutbox(options.limits);
    this.lastQueuedSeq = options.afterSeq;
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
    options.response.once('close', () => {
      // The socket went away: before we ended, the client left; after, our end has finished.
      if (this.endReason === null) this.end('client_gone', { discard: true });
      this.markClosed();
    });
    this.pingTimer = setInterval(() => {
      // Only on a quiet stream: a ping must never count towards cutting a subscriber off.
      if (this.outbox.size === 0) this.outbox.push(ssePingFrame);
    }, options.pingIntervalMs);
    this.pingTimer.unref();
    const sink = {
      deliver: (event: ProtocolEvent) => this.deliver(event.seq, sseEventFrame(event)),
      deliverWhenRoom: (event: ProtocolEvent) => this.deliverWhenRoom(event.seq, sseEventFrame(event)),
    };
    void feedSession(options.runtime, options.sessionId, options.afterSeq, sink, this.abort.signal).then(
      () => this.end('session_gone'),
      (error: unknown) => {
        // A deleted session is an expected end; anything else (a store failure) is a failure, and the
        // client is told why (an unknown failure as internal_error, without its text).
        if (AgentError.isInstance(error) && error.code === 'session_not_found') this.end('session_gone');
        else this.end('failed', { finalFrame: sseErrorFrame(toAgentError(error).toObject()) });
      },
    );
    void this.writeLoop();
  }

  revoke(): void {
    this.end('revoked', { discard: true });
  }

  shutdown(): Promise<void> {
    this.end('shutdown');
    return this.closed;
  }

  forgetSession(sessionId: string): void {
    if (sessionId === this.options.sessionId) this.end('session_gone');
  }

  private deliver(seq: number, frame: OutboxFrame): boolean {
    if (this.endReason !== null) return false;
    if (!this.outbox.push(frame)) {
      // Fell behind past the bound: what is queued still goes out, then where to resume from.
      this.end('overflow', { finalFrame: sseOverflowFrame(this.lastQueuedSeq) });
      return false;
    }
    this.lastQueuedSeq = seq;
    this.events += 1;
    return true;
  }

  private async deliverWhenRoom(seq: number, frame: OutboxFrame): Promise<boolean> {
    if (this.endReason !== null || !(await this.outbox.pushWhenRoom(frame))) return false;
    this.lastQueuedSeq = seq;
    this.events += 1;
    return true;
  }

  private async writeLoop(): Promise<void> {
    const { response } = this.options;
    for (;;) {
      await this.outbox.waitForFrames();
      const chunk = this.outbox.takeJoined(chunkBytes);
      if (chunk === null || response.destroyed) break;
      if (!response.write(chunk)) await drainedOrClosed(response);
    }
    if (!response.destroyed) response.end();
    // Gone without its close heard here: ended all the same, so it holds no subscriber's place.
    else if (this.endReason === null) this.end('client_gone', { discard: true });
  }

  private end(reason: SseEndReason, options: { discard?: boolean; finalFrame?: OutboxFrame } = {}): void {
    if (this.endReason !== null) return;
    this.endReason = reason;
    this.abort.abort();
    clearInterval(this.pingTimer);
    // An overflow frame goes past the bound by one small frame, on purpose: the subscriber must learn where to resume.
    this.outbox.end(options);
    if (reason !== 'client_gone') {
      // A client that stopped reading must not hold a closing stream open for ever.
      this.lingerTimer = setTimeout(() => this.options.response.destroy(), this.options.lingerMs ?? 30_000);
      this.lingerTimer.unref();
      void this.closed.then(() => clearTimeout(this.lingerTimer));
    }
    this.options.onEnd(reason, { events: this.events, lastSeq: this.lastQueuedSeq });
  }
}

function drainedOrClosed(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.once('drain', done);
    response.once('close', done);
  });
}
