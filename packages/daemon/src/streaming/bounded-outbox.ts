export interface OutboxLimits {
  /** Frames a subscriber may have queued before it counts as fallen behind. */
  readonly maxFrames: number;
  /** Bytes a subscriber may have queued before it counts as fallen behind. */
  readonly maxBytes: number;
}

/**
 * Frames are bytes, encoded once by the producer: an event fanned out to many subscribers is
 * serialized and encoded once and the same buffer is queued for each of them (never mutated).
 */
export type OutboxFrame = Uint8Array;

/**
 * The bounded buffer between the runtime and one subscriber's connection. The runtime side pushes
 * without waiting (a slow subscriber must never slow the session); the connection side takes frames
 * as fast as its socket accepts them. A push that would pass the bound is refused, and the caller
 * cuts the subscriber off: memory per subscriber stays bounded whatever the client does.
 *
 * A producer that can wait (a replay from the store) fills at most half the bound: the other half is
 * kept for what cannot wait (live events, a socket's answers to its commands and subscribes), so a
 * client that reads slowly while a long history replays is not cut off for the replay's own frames.
 */
export class BoundedOutbox {
  private readonly frames: OutboxFrame[] = [];
  private head = 0;
  private queuedBytes = 0;
  private ended = false;
  private frameWaiters: Array<() => void> = [];
  private roomWaiters: Array<() => void> = [];
  private readonly limits: OutboxLimits;

  /** What a waiting producer may fill: half the bound (see the class comment). */
  private readonly patientLimits: OutboxLimits;

  constructor(limits: OutboxLimits) {
    this.limits = { maxFrames: Math.max(1, limits.maxFrames), maxBytes: Math.max(1, limits.maxBytes) };
    this.patientLimits = {
      maxFrames: Math.max(1, Math.floor(this.limits.maxFrames / 2)),
      maxBytes: Math.max(1, Math.floor(this.limits.maxBytes / 2)),
    };
  }

  get size(): number {
    return this.frames.length - this.head;
  }

  get bytes(): number {
    return this.queuedBytes;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Queues a frame; false (nothing queued) when it would pass the bound. A lone frame always fits. */
  push(frame: OutboxFrame): boolean {
    if (this.ended || !this.fits(frame.byteLength)) return false;
    this.enqueue(frame);
    return true;
  }

  /**
   * Queues a frame once it fits in half the bound, waiting for the reader to take enough first: for
   * producers that can wait, such as a replay from the store. False, with nothing queued, when the
   * outbox ended or `signal` aborted meanwhile: a subscription ended while its frame waited must not
   * send it after all (a socket told `unsubscribed` gets no more of its events).
   */
  async pushWhenRoom(frame: OutboxFrame, signal?: AbortSignal): Promise<boolean> {
    while (!this.ended && !signal?.aborted && !this.fits(frame.byteLength, this.patientLimits))
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        this.roomWaiters.push(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    if (this.ended || signal?.aborted) return false;
    this.enqueue(frame);
    return true;
  }

  /** Resolves once everything queued was taken (or dropped by a discarding end). */
  async waitUntilEmpty(): Promise<void> {
    while (this.size > 0) await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves once a frame is queued, or the outbox ended. */
  async waitForFrames(): Promise<void> {
    while (!this.ended && this.size === 0) await new Promise<void>((resolve) => this.frameWaiters.push(resolve));
  }

  /** The oldest frame, or undefined when none is queued. */
  shift(): OutboxFrame | undefined {
    if (this.size === 0) return undefined;
    const frame = this.frames[this.head]!;
    this.head += 1;
    this.queuedBytes -= frame.byteLength;
    this.compact();
    this.wake('room');
    return frame;
  }

  /** Queued frames joined into one chunk of about `maxChunkBytes` (at least one frame); null when none is queued. */
  takeJoined(maxChunkBytes: number): OutboxFrame | null {
    if (this.size === 0) return null;
    const parts: OutboxFrame[] = [];
    let taken = 0;
    while (this.size > 0 && (parts.length === 0 || taken + this.frames[this.head]!.byteLength <= maxChunkBytes)) {
      const frame = this.frames[this.head]!;
      this.head += 1;
      this.queuedBytes -= frame.byteLength;
      taken += frame.byteLength;
      parts.push(frame);
    }
    this.compact();
    this.wake('room');
    // A lone frame goes out as it is: the common case on a live stream, and no copy.
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts, taken);
  }

  /**
   * No more frames will come. `discard` drops what is queued (the reader will not get it);
   * `finalFrame` is queued last whatever the bound (e.g. telling a cut-off subscriber where to resume).
   */
  end(options: { discard?: boolean; finalFrame?: OutboxFrame } = {}): void {
    if (options.discard) {
      this.frames.length = 0;
      this.head = 0;
      this.queuedBytes = 0;
    }
    if (options.finalFrame !== undefined && !this.ended) this.enqueue(options.finalFrame);
    this.ended = true;
    this.wake('frames');
    this.wake('room');
  }

  private fits(bytes: number, limits: OutboxLimits = this.limits): boolean {
    return this.size === 0 || (this.size + 1 <= limits.maxFrames && this.queuedBytes + bytes <= limits.maxBytes);
  }

  private enqueue(frame: OutboxFrame): void {
    this.frames.push(frame);
    this.queuedBytes += frame.byteLength;
    this.wake('frames');
  }

  private compact(): void {
    // Drop consumed slots now and then instead of shifting the array on every take.
    if (this.head > 1024 && this.head * 2 > this.frames.length) {
      this.frames.splice(0, this.head);
      this.head = 0;
    }
  }

  private wake(which: 'frames' | 'room'): void {
    const waiters = which === 'frames' ? this.frameWaiters : this.roomWaiters;
    if (waiters.length === 0) return;
    if (which === 'frames') this.frameWaiters = [];
    else this.roomWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
