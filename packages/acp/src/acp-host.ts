import type { ProviderCapabilities, SessionSnapshot, TetherSurface } from '@tether/protocol';

/** One page of sessions, newest first. */
export interface AcpSessionPage {
  readonly sessions: readonly SessionSnapshot[];
  /** Pass back as `cursor` for the next page; null on the last one. */
  readonly nextCursor: string | null;
}

/**
 * What the ACP agent drives: Tether's one surface, whether a runtime in this process or a daemon
 * through @tether/client, plus the reads whose shapes differ between the two (the CLI adapts each).
 */
export interface AcpHost extends TetherSurface {
  listSessionPage(options: { readonly cursor?: string; readonly limit: number }): Promise<AcpSessionPage>;
  /** The named provider's capabilities (the default provider when none is named). */
  providerCapabilities(provider?: string): Promise<ProviderCapabilities>;
}

/** Where the agent writes what is not protocol (stderr): codes and ids, never prompt text. */
export interface AcpLog {
  info(message: string, fields?: Readonly<Record<string, unknown>>): void;
  error(message: string, fields?: Readonly<Record<string, unknown>>): void;
}

export interface RunAcpAgentOptions {
  readonly host: AcpHost;
  /** The client's messages (stdin). */
  readonly input: ReadableStream<Uint8Array>;
  /** Protocol only (stdout). */
  readonly output: WritableStream<Uint8Array>;
  readonly log: AcpLog;
  /**
   * When the client goes away, leave the runs its prompts were waiting for running instead of
   * interrupting them: for a host whose sessions live on without this process (a daemon), where the
   * web UI or `tether attach` can follow them. Its open approvals are still denied.
   */
  readonly runsOutliveClient?: boolean;
}
