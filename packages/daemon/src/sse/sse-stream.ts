import { AgentError, type ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import { BoundedOutbox, type OutboxLimits } from '../streaming/bounded-outbox.js';
import type { LiveConnection } from '../streaming/connection-registry.js';
import { feedSession } from '../streaming/session-feed.js';
import { ssePingFrame, sseEventFrame, sseOverflowFrame } from './sse-writer.js';

export type SseEndReason = 'client_gone' | 'overflow' | 'revoked' | 'shutdown' | 'session_gone' | 'failed';

export interface SseStreamOptions {
  readonly runtime: AgentRuntime;
  readonly sessionId: string;
  readonly afterSeq: number;
  readonly limits: OutboxLimits;
  readonly pingIntervalMs: number;
  /** Ends the underlying connection when a closed stream cannot be flushed (a client that stopped reading). */
  readonly destroyConnection: () => void;
  /** How long a closing stream may take to flush before its connection is destroyed. */
  readonly lingerMs?: number;
  readonly onEnd: (reason: SseEndReason, stats: { events: number; lastSeq: number }) => void;
}

// Frames are joined into chunks of about this size: fewer writes, same bytes.
const chunkBytes = 64 * 1024;
const encoder = new TextEncoder();

/**
 * One `GET /v1/sessions/:id/events` response. The body is a pull-based stream: the HTTP layer pulls
 * the next chunk only once the socket took the last one, so whatever the client does not read stays
 * in this stream's bounded outbox, and passing the bound ends the stream with `event: overflow`.
 */
export class SseStream implements LiveConnection {
  readonly body: ReadableStream<Uint8Array>;
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
    this.body = new ReadableStream<Uint8Array>(
      {
        pull: (controller) => this.pull(controller),
        cancel: () => this.end('client_gone', { discard: true }),
      },
      { highWaterMark: 0 },
    );
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
      // A deleted session is an expected end; anything else (a store failure) is logged as a failure.
      (error: unknown) => this.end(AgentError.isInstance(error) && error.code === 'session_not_found' ? 'session_gone' : 'failed'),
    );
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

  private deliver(seq: number, frame: string): boolean {
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

  private async deliverWhenRoom(seq: number, frame: string): Promise<boolean> {
    if (this.endReason !== null || !(await this.outbox.pushWhenRoom(frame))) return false;
    this.lastQueuedSeq = seq;
    this.events += 1;
    return true;
  }

  private async pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    await this.outbox.waitForFrames();
    const chunk = this.outbox.takeJoined(chunkBytes);
    if (chunk !== null) {
      controller.enqueue(encoder.encode(chunk));
      return;
    }
    controller.close();
    this.markClosed();
  }

  private end(reason: SseEndReason, options: { discard?: boolean; finalFrame?: string } = {}): void {
    if (this.endReason !== null) {
      if (reason === 'client_gone') this.markClosed();
      return;
    }
    this.endReason = reason;
    this.abort.abort();
    clearInterval(this.pingTimer);
    // An overflow frame goes past the bound by one small frame, on purpose: the subscriber must learn where to resume.
    this.outbox.end(options);
    if (reason === 'client_gone') {
      this.markClosed();
    } else {
      this.lingerTimer = setTimeout(() => {
        this.options.destroyConnection();
        this.markClosed();
      }, this.options.lingerMs ?? 30_000);
      this.lingerTimer.unref();
      void this.closed.then(() => clearTimeout(this.lingerTimer));
    }
    this.options.onEnd(reason, { events: this.events, lastSeq: this.lastQueuedSeq });
  }
}
