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
 */
export class AnswerDelivery {
  /** Answers the SDK has started to write, by request id: settles with whether the pipe took them. */
  private readonly writes = new Map<string, Promise<boolean>>();
  /** Callers waiting for the SDK to start writing an answer. */
  private readonly waiting = new Map<string, (written: Promise<boolean>) => void>();

  /** The stdin the SDK writes to, in front of the CLI's own; `onFailed` hears of the first write the pipe refused. */
  wrap(stdin: Writable, onFailed: () => void): Writable {
    let failed = false;
    const wrapper = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        const ids = answeredRequestIds(chunk.toString('utf8'));
        const written = new Promise<boolean>((resolve) => {
          stdin.write(chunk, (error) => {
            resolve(!error);
            if (error && !failed) {
              failed = true;
              onFailed();
            }
            callback(error ?? null);
          });
        });
        for (const id of ids) {
          const waiter = this.waiting.get(id);
          this.waiting.delete(id);
          if (waiter) waiter(written);
          else this.writes.set(id, written);
        }
      },
      final: (callback) => {
        stdin.end();
        callback();
      },
    });
    // A failed write is reported through the answer it carried; the SDK sees its own error too.
    wrapper.on('error', () => undefined);
    return wrapper;
  }

  /**
   * Whether the CLI's input took the answer to `requestId`. The SDK writes it in the microtasks after
   * its canUseTool promise settles, and the write reports back in the same tick, so this settles
   * before the CLI's next output is read. An answer the SDK did not write by the next macrotask
   * (dropped: its stdin ended, the prompt withdrawn) counts as handed over, as far as this
   * transport can see.
   */
  delivered(requestId: string): Promise<boolean> {
    const written = this.writes.get(requestId);
    this.writes.delete(requestId);
    if (written) return written;
    return new Promise((resolve) => {
      this.waiting.set(requestId, resolve);
      setImmediate(() => {
        if (this.waiting.delete(requestId)) resolve(true);
      });
    });
  }
}
