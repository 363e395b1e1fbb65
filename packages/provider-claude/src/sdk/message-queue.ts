/**
 * The input side of a streaming-input query(): an async iterable the SDK reads user lines from,
 * one at a time, for as long as the session's agent lives. Ending it lets the SDK close stdin.
 */
export class MessageQueue<Item> implements AsyncIterable<Item> {
  private readonly items: Item[] = [];
  private waiter: ((result: IteratorResult<Item>) => void) | null = null;
  private ended = false;

  /** False once the queue has ended (the agent takes no more input). */
  push(item: Item): boolean {
    if (this.ended) return false;
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter) waiter({ done: false, value: item });
    else this.items.push(item);
    return true;
  }

  end(): void {
    this.ended = true;
    this.items.length = 0;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.({ done: true, value: undefined });
  }

  [Symbol.asyncIterator](): AsyncIterator<Item> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ done: false, value: item });
        if (this.ended) return Promise.resolve({ done: true, value: undefined });
        return new Promise((resolve) => {
          this.waiter = resolve;
        });
      },
      return: () => {
        this.end();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }
}
