import { StdoutChannel } from './stdout-channel.js';

/**
 * Stdout channels connected ahead of the processes that take them, so a spawn (synchronous) finds
 * one ready: connecting a pair takes a few turns of the event loop. With none ready (more starts at
 * once than spares, or a system where a pair cannot be made) a process gets a plain pipe, as before.
 */
export class StdoutChannels {
  private readonly spares: number;
  private readonly parent: string | undefined;
  private readonly ready: StdoutChannel[] = [];
  private opening: Promise<void> | null = null;
  /** The last attempt failed: the next is made on the next take, not in a loop. */
  private failed = false;
  private disposed = false;

  constructor(options: { spares?: number; parent?: string } = {}) {
    this.spares = options.spares ?? 2;
    this.parent = options.parent;
  }

  /** Resolves once a channel is ready or could not be made (never rejects: a pipe serves then). */
  async prepare(): Promise<void> {
    this.topUp();
    // One ready is enough: a session's open does not wait for the second spare's connection.
    if (this.ready.length === 0) await this.opening;
  }

  /**
   * Resolves once every spare is connected (or one could not be made). For a host's start: its first
   * sessions then open with no connection still being made in the turns of the event loop before
   * their agents are spawned.
   */
  async fill(): Promise<void> {
    // Each connection, once made, starts the next one (topUp) until every spare is there.
    this.topUp();
    while (this.opening) await this.opening;
  }

  /** A ready channel, removed from the spares (which are topped up); undefined when none is. */
  take(): StdoutChannel | undefined {
    let channel = this.ready.shift();
    // One that failed while it waited (its socket errored) is let go, both ends closed.
    while (channel?.ended) {
      channel.close();
      channel = this.ready.shift();
    }
    this.failed = false;
    this.topUp();
    return channel;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await this.opening;
    for (const channel of this.ready.splice(0)) channel.close();
  }

  private topUp(): void {
    if (this.opening || this.disposed || this.failed || this.ready.length >= this.spares) return;
    this.opening = StdoutChannel.open(this.parent)
      .then(
        (channel) => {
          if (this.disposed) channel.close();
          else this.ready.push(channel);
        },
        () => {
          this.failed = true;
        },
      )
      .finally(() => {
        this.opening = null;
        this.topUp();
      });
  }
}
