import { Writable } from 'node:stream';

/** The request ids of the control_response lines in `text` (what the SDK writes for our prompt answers). */
function answeredRequestIds(text: string): string[] {
  if (!text.includes('"control_response"')) return [];
  const ids: string[] = [];
  for (const line of text.split('\n')) {
    try {
      const value = JSON.parse(line) as { type?: unknown; response?: { request_id?: unknown } } | null;
      if (value?.type === 'control_response' && typeof value.response?.request_id === 'string')
        ids.push(value.response.request_id);
    } catch {
      // Not a whole JSON line: not an answer.
    }
  }
  return ids;
}

/**
 * The SDK writes our prompt answers to the CLI's stdin itself, so whether one arrived shows only
 * there. The SDK gets a stand-in for that stdin which passes every write on and notes, for each
 * answer it carries, whether the pipe took it: a CLI that closed its stdin fails the write (EPIPE).
 *
 * The SDK (0.3.x, ProcessTransport.write) writes an answer in the microtasks after its canUseTool
 * promise settles, or never: once its stdin reported an error (any earlier failed write, a control
 * request's too) it marks itself not ready and drops every later write with only a debug log, and
 * it drops them as well once its stdin ended, its process exited or its query closed.
 */
export class AnswerDelivery {
  /** Answers the SDK has written, by request id: settles with whether the pipe took them. */
  private readonly writes = new Map<string, Promise<boolean>>();
  /** Callers waiting for the SDK to write an answer. */
  private readonly waiting = new Map<string, (written: Promise<boolean>) => void>();
  /** The stand-in the SDK writes to. */
  private input: Writable | undefined;
  /** The CLI's stdin refused a write. */
  private failed = false;

  /** The stdin the SDK writes to, in front of the CLI's own; `onFailed` hears of the first write the pipe refused. */
  wrap(stdin: Writable, onFailed: () => void): Writable {
    const wrapper: Writable = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        const ids = answeredRequestIds(chunk.toString('utf8'));
        const written = new Promise<boolean>((resolve) => {
          stdin.write(chunk, (error) => {
            resolve(!error);
            if (!error || this.failed) return;
            this.failed = true;
            onFailed();
            // The SDK hears of it as from its own stdin (it stops writing); the answer's own promise says it failed.
            wrapper.destroy(error);
          });
        });
        for (const id of ids) {
          const waiter = this.waiting.get(id);
          this.waiting.delete(id);
          if (waiter) waiter(written);
          else this.writes.set(id, written);
        }
        // Taken at once, the CLI's own stdin queueing it: so each write of the SDK reaches the code
        // above in the same tick, never held here behind an earlier write still on its way.
        callback();
      },
      final: (callback) => {
        stdin.end();
        callback();
      },
    });
    // A failed write is reported through the answer it carried; the SDK sees its own error too.
    wrapper.on('error', () => undefined);
    this.input = wrapper;
    return wrapper;
  }

  /**
   * Whether the CLI's input took the answer to `requestId`, known before the CLI's next output is
   * read. Called right after the SDK's canUseTool promise got the answer: the SDK writes it in the
   * microtasks that follow, or not at all (its stdin failed or ended before): an answer not written
   * once those have run did not arrive.
   */
  delivered(requestId: string): Promise<boolean> {
    const written = this.writes.get(requestId);
    this.writes.delete(requestId);
    if (written) return written;
    // What makes the SDK drop its writes: a failed one, or its stdin ended.
    if (this.failed || this.input?.writableEnded || this.input?.destroyed) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.waiting.set(requestId, resolve);
      setImmediate(() => {
        if (this.waiting.delete(requestId)) resolve(false);
      });
    });
  }
}
