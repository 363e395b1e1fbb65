import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { AgentError, type ProtocolEvent } from '@tether/protocol';
import { Notifier } from './notifications/notifier.js';
import { bindProcessToHost, createClaudeProvider } from '@tether/provider-claude';
import {
  type AgentRuntime,
  type LeaseChange,
  type TetherStore,
  type WorkspaceAcquirer,
  createAgentRuntime,
} from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { createGitWorktreeAcquirer } from '@tether/workspace-git';
import { isLoopbackHost } from './auth/loopback-host.js';
import { createOriginPolicy, hostNameForUrl, isWildcardHost } from './auth/origin-check.js';
import { ensureToken } from './auth/token-file.js';
import { TokenGuard } from './auth/token-guard.js';
import {
  type Daemon,
  type DaemonOptions,
  defaultHost,
  defaultIdleTimeoutMs,
  defaultMaxConnections,
  defaultPingIntervalMs,
  defaultPort,
  defaultShutdownGraceMs,
  defaultSubscriberBufferBytes,
  defaultSubscriberBufferEvents,
} from './daemon-options.js';
import { limitConnections, streamLimitOf } from './http/connection-limit.js';
import { trackRequestsInFlight } from './http/requests-in-flight.js';
import { createApp } from './create-app.js';
import type { DaemonState } from './daemon-state.js';
import { removeDaemonInfo, writeDaemonInfo } from './lifecycle/daemon-info.js';
import { drainRuns } from './lifecycle/drain-runs.js';
import { type DaemonLogger, createLogger } from './logging/create-logger.js';
import { logBackgroundError } from './logging/background-error-log.js';
import { logLeaseChange } from './logging/lease-change-log.js';
import { RefusedRequestLog } from './logging/refused-request-log.js';
import { DaemonMetrics } from './metrics/daemon-metrics.js';
import { type DaemonNotifications, createDaemonNotifications } from './notifications/daemon-notifications.js';
import { resolveNotifications } from './notifications/notification-config.js';
import { StaticFiles } from './static/static-files.js';
import { ConnectionRegistry } from './streaming/connection-registry.js';
import { createUpgradeHandler } from './websocket/websocket-upgrade.js';

// How long open streams and sockets get to flush their last events at shutdown before they are cut.
const connectionCloseMs = 2_000;

/**
 * Time limits of the HTTP server, so a client that connects and then stalls holds nothing for long:
 * the request head must arrive within headersTimeoutMs, the whole request (a body of up to 64 MiB)
 * within requestTimeoutMs, and a kept-alive connection may sit idle between requests for
 * keepAliveTimeoutMs. Responses (event streams) are not bounded by these; idleTimeoutMs is.
 */
const headersTimeoutMs = 10_000;
const requestTimeoutMs = 60_000;
const keepAliveTimeoutMs = 5_000;
// How often Node checks the two request timeouts above (its default, 30 s, would let them run late).
const timeoutCheckIntervalMs = 2_000;

/** After the grace, the runtime interrupts what still runs; an interrupt normally lands within a second. */
const interruptWaitMs = 5_000;

function idleTimeoutOf(options: DaemonOptions): number {
  return options.idleTimeoutMs ?? Math.max(defaultIdleTimeoutMs, 2 * (options.pingIntervalMs ?? defaultPingIntervalMs));
}

function checkOptions(options: DaemonOptions): void {
  // Throws the typed refusal for an allowOrigins or advertiseUrl that is no http(s) origin, before anything is opened.
  createOriginPolicy({
    port: 0,
    boundHost: options.host ?? defaultHost,
    allowOrigins: options.allowOrigins ?? [],
    ...(options.advertiseUrl === undefined ? {} : { advertiseUrl: options.advertiseUrl }),
  });
  const port = options.port ?? defaultPort;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new AgentError({
      code: 'invalid_command',
      message: `The port must be a whole number from 0 to 65535 (0 picks a free one), not ${String(port)}.`,
      details: { reason: 'invalid_port' },
    });
  }
  for (const [name, value] of Object.entries({
    shutdownGraceMs: options.shutdownGraceMs,
    subscriberBufferEvents: options.subscriberBufferEvents,
    subscriberBufferBytes: options.subscriberBufferBytes,
    pingIntervalMs: options.pingIntervalMs,
    maxConnections: options.maxConnections,
    idleTimeoutMs: options.idleTimeoutMs,
    interactionTimeoutMs: options.interactionTimeoutMs,
  })) {
    if (value !== undefined && (!Number.isFinite(value) || value < (name === 'shutdownGraceMs' ? 0 : 1))) {
      throw new AgentError({
        code: 'invalid_command',
        message: `${name} must be a positive number.`,
        details: { reason: `invalid_${name}` },
      });
    }
  }
  // A quiet event stream or socket is kept open by its pings: the idle limit must leave room for one.
  if (idleTimeoutOf(options) <= (options.pingIntervalMs ?? defaultPingIntervalMs)) {
    throw new AgentError({
      code: 'invalid_command',
      message: `idleTimeoutMs (${idleTimeoutOf(options)}) must be longer than pingIntervalMs, or quiet streams would be cut between pings.`,
      details: { reason: 'invalid_idleTimeoutMs' },
    });
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen({ host, port }, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address));
}

async function openStaticFiles(directory: string | undefined): Promise<StaticFiles | null> {
  if (directory === undefined) return null;
  const files = await StaticFiles.open(directory);
  if (files === null) {
    throw new AgentError({
      code: 'invalid_command',
      message: `staticDirectory ${directory} holds no index.html; build the web UI first (\`npm run build\`).`,
      details: { reason: 'static_directory_empty' },
    });
  }
  return files;
}

/** The git worktree kind (under the data dir unless told otherwise), and the host's own kinds, which win. */
function workspaceAcquirers(options: DaemonOptions, dataDir: string): WorkspaceAcquirer[] {
  const own = options.workspaces ?? [];
  if (own.some((acquirer) => acquirer.kind === 'git_worktree')) return [...own];
  const root = path.resolve(options.worktreeRoot ?? path.join(dataDir, 'worktrees'));
  // Its git commands (and their hooks) end with the daemon however it ends, as its agents do.
  const environment = { ...process.env, ...bindProcessToHost().environment };
  // The data dir is this daemon's alone (its lock): what a daemon of it killed half-way left is taken back at start.
  return [createGitWorktreeAcquirer({ root, environment, owner: dataDir }), ...own];
}

async function createRuntime(
  options: DaemonOptions,
  dataDir: string,
  logger: DaemonLogger,
  observer: (event: ProtocolEvent) => void,
  leaseChanged: (change: LeaseChange) => void,
): Promise<{ runtime: AgentRuntime; store: TetherStore }> {
  // data_dir_in_use (another daemon or runtime owns the directory) propagates as the typed error.
  const openStore = options.openStore ?? ((directory: string) => openSqliteStore({ dataDir: directory }));
  const store = await openStore(dataDir);
  const logChange = logLeaseChange(logger);
  try {
    const runtime = await createAgentRuntime({
      providers: options.providers ?? [createClaudeProvider()],
      store,
      workspaces: workspaceAcquirers(options, dataDir),
      ...(options.maxOpenSessions === undefined ? {} : { maxOpenSessions: options.maxOpenSessions }),
      ...(options.interactionTimeoutMs === undefined ? {} : { interactionTimeoutMs: options.interactionTimeoutMs }),
      onBackgroundError: logBackgroundError(logger),
      onLeaseChange: (change) => {
        logChange(change);
        leaseChanged(change);
      },
      observer,
    });
    return { runtime, store };
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
}

/** An IPv6 address as a URL writes it (`[::1]`) is bound as the address itself: `listen` takes no brackets. */
function addressToBind(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * Starts the daemon: the store (SQLite in `dataDir` unless options.openStore) and the runtime, the
 * token, then the HTTP API and the WebSocket endpoint on one port, and `daemon.json`. Installs no
 * signal handlers: the caller (e.g. `tether serve`) calls close() on SIGTERM/SIGINT.
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  checkOptions(options);
  const dataDir = path.resolve(options.dataDir);
  const host = addressToBind(options.host ?? defaultHost);
  const logger = createLogger(options.logger, options.logDestination);
  // Checked before the store is opened: a bad option must not leave a half-started daemon.
  const staticFiles = await openStaticFiles(options.staticDirectory);
  const notificationSetup = await resolveNotifications(options.notifications);
  // What the runtime publishes before notifications are on (a crash's runs, ended as it loads) is
  // kept for them: a receiver of run_failed is told of a run a crash ended, too.
  let beforeNotifications: ProtocolEvent[] | null = [];
  let metrics: DaemonMetrics | undefined;
  const { runtime, store } = await createRuntime(
    options,
    dataDir,
    logger,
    (event) => {
      if (beforeNotifications !== null && Notifier.concerns(event)) beforeNotifications.push(event);
    },
    // A session another daemon took over: what this one counted of it is that daemon's to count now.
    (change) => {
      if (change.change === 'lost') metrics?.forgetSessions(change.sessionIds);
    },
  );

  let server: Server | undefined;
  let tokens: TokenGuard | undefined;
  let notifications: DaemonNotifications | undefined;
  try {
    const startToken = await ensureToken(dataDir);
    if (startToken.replaced !== null)
      logger.warn(
        { reason: startToken.replaced },
        'the token file was not yours alone: its token is never accepted, a new one was written',
      );
    tokens = new TokenGuard(dataDir, startToken.token);
    metrics = new DaemonMetrics(runtime, store);
    notifications = await createDaemonNotifications({
      options: options.notifications,
      resolved: notificationSetup,
      dataDir,
      runtime,
      logger,
      servesWebUi: staticFiles !== null,
    });
    if (notifications.metrics !== null) metrics.expose(notifications.metrics.registry);
    const state: DaemonState = {
      runtime,
      store,
      tokens,
      policy: createOriginPolicy({ port: options.port ?? defaultPort, boundHost: host }),
      metrics,
      connections: new ConnectionRegistry(streamLimitOf(options.maxConnections ?? defaultMaxConnections)),
      logger,
      refusals: new RefusedRequestLog(logger),
      subscriberLimits: {
        maxFrames: options.subscriberBufferEvents ?? defaultSubscriberBufferEvents,
        maxBytes: options.subscriberBufferBytes ?? defaultSubscriberBufferBytes,
      },
      pingIntervalMs: options.pingIntervalMs ?? defaultPingIntervalMs,
      staticFiles,
      links: notifications.links,
      webPush: notifications.webPush,
      draining: false,
    };
    const app = createApp(state);
    // overrideGlobalObjects: false: a library must not swap the host process's global Request/Response.
    server = createServer(
      {
        headersTimeout: headersTimeoutMs,
        requestTimeout: requestTimeoutMs,
        keepAliveTimeout: keepAliveTimeoutMs,
        connectionsCheckingInterval: timeoutCheckIntervalMs,
        // Only a WebSocket upgrade is one: any other (h2c, which curl --http2 and Java's HttpClient
        // ask for) is ignored and the request served as it is (RFC 9110), not refused 404 everywhere.
        shouldUpgradeCallback: (request) => request.headers.upgrade?.toLowerCase() === 'websocket',
      },
      getRequestListener(app.fetch, { overrideGlobalObjects: false }),
    );
    // Covers a connection that never sends a byte, which none of the request timeouts sees.
    server.timeout = idleTimeoutOf(options);
    limitConnections(server, options.maxConnections ?? defaultMaxConnections);
    const requestsInFlight = trackRequestsInFlight(server);
    const upgrades = createUpgradeHandler(state);
    server.on('upgrade', upgrades.handle);

    const port = await listen(server, host, options.port ?? defaultPort);
    state.policy = createOriginPolicy({
      port,
      boundHost: host,
      interfaceAddresses: isWildcardHost(host) ? interfaceAddresses() : [],
      allowOrigins: options.allowOrigins ?? [],
      ...(options.advertiseUrl === undefined ? {} : { advertiseUrl: options.advertiseUrl }),
    });
    const url = `http://${isWildcardHost(host) ? '127.0.0.1' : hostNameForUrl(host)}:${port}`;

    const tokenGuard = tokens;
    tokenGuard.watch();
    tokenGuard.onRotated(() => {
      logger.warn(
        { connections: state.connections.size },
        'token rotated: closing connections opened with the old one',
      );
      state.connections.revokeAll();
    });
    // A fallback for a missed file watch event; the per-request check already makes rotation immediate for requests.
    const tokenCheck = setInterval(() => tokenGuard.refresh(), state.pingIntervalMs);
    tokenCheck.unref();

    // Other daemons sharing the store name this address when they refuse a command for a session
    // this one drives (session_owned_elsewhere): only now is there one to name.
    if (store.coordination) {
      const advertised = options.advertiseUrl ?? url;
      await store.coordination.advertise(advertised);
      logger.info(
        { advertised, ownerId: store.coordination.ownerId },
        'address advertised to the daemons sharing the store',
      );
    }
    // Links in notifications must reach this daemon from where people read them: the advertised address.
    const daemonNotifications = notifications;
    const earlier = beforeNotifications;
    beforeNotifications = null;
    daemonNotifications.start(options.advertiseUrl ?? url, earlier);
    await writeDaemonInfo(dataDir, { url, pid: process.pid, startedAt: new Date().toISOString() });
    logger.info({ url, dataDir, host }, 'daemon listening');
    // The address the socket got, not the name asked for: a name resolves to whatever its DNS says.
    const boundAddress = (server.address() as AddressInfo).address;
    if (!isLoopbackHost(boundAddress))
      logger.warn(
        { host, boundAddress },
        'listening beyond loopback: other machines can reach this port (the token still guards every /v1 route)',
      );

    const httpServer = server;
    const daemonMetrics = metrics;
    let closing: Promise<void> | null = null;
    const hurry = new AbortController();
    const close = (closeOptions: { readonly force?: boolean } = {}): Promise<void> => {
      if (closeOptions.force === true && !hurry.signal.aborted) {
        hurry.abort();
        // A shutdown under way is only hurried: no more grace, the agents' process groups killed.
        if (closing !== null) void runtime.shutdown({ force: true, graceMs: 0 }).catch(() => undefined);
      }
      closing ??= (async () => {
        logger.info({ graceMs: options.shutdownGraceMs ?? defaultShutdownGraceMs }, 'daemon shutting down');
        state.draining = true;
        try {
          // Still listening meanwhile: a client is told the daemon is stopping (503 runtime_stopped) rather
          // than finding nobody there, and can still answer a prompt, interrupt a run or close a session.
          await drainRuns(runtime, options.shutdownGraceMs ?? defaultShutdownGraceMs, logger, hurry.signal);
        } finally {
          httpServer.close();
          await runtime
            .shutdown(hurry.signal.aborted ? { force: true, graceMs: 0 } : { graceMs: interruptWaitMs })
            .catch((error: unknown) =>
              logger.error(
                { errorCode: AgentError.isInstance(error) ? error.code : 'internal_error' },
                'runtime shutdown failed',
              ),
            );
          // After the runs' last events were observed; what is still queued or retrying is dropped (and counted).
          daemonNotifications.close();
          await state.connections.shutdownAll(connectionCloseMs);
          upgrades.close();
          // The streams are closed: what is left are answers the runtime's stop just decided (a refusal).
          await requestsInFlight.settled(connectionCloseMs);
          httpServer.closeAllConnections();
          clearInterval(tokenCheck);
          tokenGuard.stop();
          daemonMetrics.stop();
          state.refusals.flush();
          await removeDaemonInfo(dataDir, process.pid).catch(() => undefined);
          logger.info({}, 'daemon stopped');
        }
      })();
      return closing;
    };

    return {
      url,
      port,
      get token() {
        return tokenGuard.token;
      },
      runtime,
      notificationSecretFile: daemonNotifications.secretFile,
      close,
    };
  } catch (error) {
    server?.close();
    tokens?.stop();
    metrics?.stop();
    notifications?.close();
    await runtime.shutdown().catch(() => undefined);
    throw error;
  }
}
