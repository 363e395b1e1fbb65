import type { AgentRuntime, TetherStore, WorkspaceAcquirer } from '@tether/runtime';
import type { AgentProviderV1 } from '@tether/provider-spec';
import type { LoggerOptions } from 'pino';
import type { DaemonLogger } from './logging/create-logger.js';
import type { NotificationOptions } from './notifications/notification-options.js';

export interface DaemonOptions {
  /**
   * The data directory: `daemon-token`, `daemon.json`, the worktrees and, unless openStore says
   * otherwise, the SQLite store live here (see resolveDataDir). One daemon at a time per data dir.
   */
  readonly dataDir: string;
  /**
   * Opens the store the runtime keeps sessions in (default: the SQLite store in dataDir). Called once
   * at start, after the options are checked; the daemon closes what it returns. A store kept
   * elsewhere (PostgreSQL) must still take dataDir's lock, so that one daemon owns the token and
   * daemon.json (the CLI's openStore does).
   */
  readonly openStore?: (dataDir: string) => Promise<TetherStore>;
  /**
   * With a store shared by several daemons (PostgreSQL; the store has `coordination`): the URL the
   * others name when they refuse a command for a session this daemon drives (session_owned_elsewhere).
   * Default: the URL it listens on (Daemon.url); set it when clients reach this daemon through a proxy.
   * Notifications' links point here too, so set it to an address the people notified can reach.
   * The Host/Origin check accepts its host and origin as the daemon's own.
   */
  readonly advertiseUrl?: string;
  /**
   * Where to POST notifications (an interaction requested, a run completed or failed, a session
   * waiting), signed, retried, never holding up a run; see docs/notifications.md. Checked at start.
   */
  readonly notifications?: NotificationOptions;
  /** Interface to bind (default 127.0.0.1). Anything else is reachable from elsewhere: the CLI should warn. */
  readonly host?: string;
  /** Port to listen on (default 7437; 0 picks a free one, see Daemon.port). */
  readonly port?: number;
  /** The providers sessions can use (default: one Claude provider with its own defaults). */
  readonly providers?: readonly AgentProviderV1[];
  /** Extra browser origins (e.g. "http://localhost:5173") that may call the API; only these get CORS headers. */
  readonly allowOrigins?: readonly string[];
  /** How long close() lets active runs finish before interrupting them (default 10,000 ms). */
  readonly shutdownGraceMs?: number;
  /** A pino logger (or anything with its methods), or options for a new one writing JSON to stdout. */
  readonly logger?: DaemonLogger | LoggerOptions;
  /**
   * Where a new logger writes its JSON lines instead of stdout's file descriptor: a host that
   * watches its stdout (tether serve stops when nobody reads it any more) passes its own writer.
   */
  readonly logDestination?: { write(line: string): unknown };
  /**
   * Where git_worktree sessions get their worktrees (default <dataDir>/worktrees): one folder per
   * session, created private to this user.
   */
  readonly worktreeRoot?: string;
  /** Workspace kinds beyond directory and git_worktree (a host's own); one given for either of those replaces it. */
  readonly workspaces?: readonly WorkspaceAcquirer[];
  /**
   * Approvals and questions nobody answers within this many milliseconds are denied (never allowed):
   * an unanswered prompt holds its run, and its agent's process slot, until it is answered. Default:
   * they wait.
   */
  readonly interactionTimeoutMs?: number;
  /** At most this many open sessions (the runtime's maxOpenSessions, default 5,000); beyond it open_session answers capacity_exceeded. */
  readonly maxOpenSessions?: number;
  /** Events a subscriber may fall behind by before it is cut off (default 10,000). */
  readonly subscriberBufferEvents?: number;
  /** Bytes a subscriber may fall behind by before it is cut off (default 16 MiB). */
  readonly subscriberBufferBytes?: number;
  /** Interval of SSE `: ping` comments and WebSocket pings (default 15,000 ms). */
  readonly pingIntervalMs?: number;
  /** Open connections at most (default 512); near it, connections that sent no request yet are closed first. Keep the file-descriptor limit above it. */
  readonly maxConnections?: number;
  /** A connection with no traffic for this long is closed (default 60,000 ms, and at least twice pingIntervalMs; streams and sockets ping within it). */
  readonly idleTimeoutMs?: number;
  /**
   * A directory of public files (the web UI's build, holding code only, no data) to serve at every
   * path outside /v1 and /health, without a token; it must hold an index.html. The daemon never
   * imports the UI: its host (e.g. `tether serve`) says where the files are.
   */
  readonly staticDirectory?: string;
}

export interface Daemon {
  /** Where the API is, e.g. "http://127.0.0.1:7437". */
  readonly url: string;
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  /** The bearer token in effect now (it changes when the token file is rotated). */
  readonly token: string;
  /** The runtime the daemon serves, for in-process hosts and tests. */
  readonly runtime: AgentRuntime;
  /** The file holding the secret that signs notifications to receivers without their own; null when no receiver uses it. */
  readonly notificationSecretFile: string | null;
  /**
   * Graceful shutdown: stops accepting connections, lets active runs finish within the grace,
   * interrupts the rest (their end says runtime_stopped), shuts the runtime down, closes streams and
   * sockets, removes daemon.json. Idempotent. `force` (a second signal) cuts the grace short, ends the
   * agents' process groups at once and records what was still running as stopped; it hurries a close
   * under way too. The daemon installs no signal handlers: the caller wires SIGTERM/SIGINT to this.
   */
  close(options?: { readonly force?: boolean }): Promise<void>;
}

export const defaultPort = 7437;
export const defaultHost = '127.0.0.1';
export const defaultShutdownGraceMs = 10_000;
export const defaultSubscriberBufferEvents = 10_000;
export const defaultSubscriberBufferBytes = 16 * 1024 * 1024;
export const defaultPingIntervalMs = 15_000;
export const defaultMaxConnections = 512;
export const defaultIdleTimeoutMs = 60_000;
