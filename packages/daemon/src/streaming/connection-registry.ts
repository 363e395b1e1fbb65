/** An open event stream or WebSocket, as the daemon needs to end it. */
export interface LiveConnection {
  /** The token it was authenticated with no longer works: close now. */
  revoke(): void;
  /** The daemon is stopping: send what is queued, then close. Resolves once closed. */
  shutdown(): Promise<void>;
  /** A session was deleted: stop following it. */
  forgetSession(sessionId: string): void;
}

/**
 * Every open stream and socket, so a token rotation, a delete or a shutdown reaches all of them; at most
 * `limit` of them, so that streams alone never fill the connections a daemon keeps (commands and /health
 * need some too).
 */
export class ConnectionRegistry {
  private readonly connections = new Set<LiveConnection>();

  readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  get full(): boolean {
    return this.connections.size >= this.limit;
  }

  add(connection: LiveConnection): () => void {
    this.connections.add(connection);
    return () => this.connections.delete(connection);
  }

  get size(): number {
    return this.connections.size;
  }

  revokeAll(): void {
    for (const connection of [...this.connections]) connection.revoke();
  }

  forgetSession(sessionId: string): void {
    for (const connection of [...this.connections]) connection.forgetSession(sessionId);
  }

  /** Closes everything gracefully, waiting at most `timeoutMs`; whatever is left is the caller's to destroy. */
  async shutdownAll(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([
      Promise.allSettled([...this.connections].map((connection) => connection.shutdown())),
      deadline,
    ]);
    clearTimeout(timer);
  }
}
