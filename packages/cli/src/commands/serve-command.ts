import { fetchBlockedPorts } from '@tether/client';
import { defaultShutdownGraceMs, isLoopbackHost, type NotificationOptions, startDaemon } from '@tether/daemon';
import { createClaudeProvider } from '@tether/provider-claude';
import { signalExitCode } from '@tether/runtime';
import { resolveDataDir, resolveGivenPath } from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { UsageError } from '../usage-error.js';
import { parseAgentNice } from './agent-nice-option.js';
import { secondsOption } from './seconds-option.js';
import { parseStartupTimeout } from './startup-timeout-option.js';
import { signalDeadlineMs } from './turn-driver.js';
import { parseTransport } from './transport-option.js';
import { webUiDirectory } from '../web-ui-directory.js';
import { parseCommandLine } from './parse-command-line.js';
import { openStore } from '../open-store.js';
import { parseStoreLocation, storeHelp, withoutStoreUrl } from './store-option.js';
import { parseAdvertiseUrl, parseLeaseTtl, sharedStoreHelp } from './shared-store-options.js';

export const serveUsage = `usage: tether serve [--port N] [--host HOST] [--data-dir DIR] [--allow-origin URL]... [--claude-path PATH] [--transport cli|sdk]
                    [--startup-timeout SECONDS] [--shutdown-grace SECONDS] [--agent-nice N] [--max-open-sessions N]
                    [--interaction-timeout SECONDS] [--worktree-root DIR] [--no-web]
                    [--store URL|embedded-postgres] [--lease-ttl SECONDS] [--advertise-url URL]
                    [--notify URL]... [--notify-config FILE] [--notify-allow-http]

Runs the Tether daemon: the HTTP + WebSocket API of docs/api.md on 127.0.0.1 (default port 7437),
and the web UI at / (docs/web.md) unless --no-web.
--transport sdk drives Claude Code through the Agent SDK's query() instead of its stdio (docs/providers.md).
--startup-timeout fails a run whose starting claude writes nothing for that long (default 120 s).
--shutdown-grace is how long, on SIGTERM, SIGINT, SIGHUP or SIGQUIT, running turns may go on to their end
before they are interrupted (default 10 s; 0: at once); a second signal stops everything at once, and so
does the daemon itself when its stop runs 30 s past that grace (a store that no longer answers), exit 1.
--agent-nice runs each claude that much nicer than the daemon while more than one runs, 0-19 (default
10: on a saturated machine the agents yield the CPU, and the daemon's events and answers keep flowing;
0: as the daemon; a lone claude always runs as the daemon).
--max-open-sessions caps the sessions open at once (default 5,000): beyond it open_session answers
capacity_exceeded until some are closed.
--interaction-timeout denies an approval or question nobody answered within that many seconds, 1 to
604800 (default: it waits; an unanswered prompt holds its run and its agent's process slot).
--worktree-root is where git_worktree sessions get their worktrees (default: <data dir>/worktrees).
--notify URL POSTs a signed JSON notification to URL when a run asks for approval or a question, and
when a run completes or fails (repeatable); --notify-config FILE chooses events per receiver (also
session_waiting after N seconds) and per-receiver secrets. Receivers must be https:// or loopback
http:// unless --notify-allow-http. Approvals carry one-time approve/deny links to this daemon (at
--advertise-url when set). Signing secret: <data dir>/notification-secret (docs/notifications.md).
${storeHelp}
${sharedStoreHelp}
Several daemons may share one PostgreSQL database: each drives the sessions it holds, and refuses
commands for another's with session_owned_elsewhere, naming that daemon's URL (docs/store-postgres.md).
The first start creates a token; each start shows it at a terminal (never in captured output), and
\`tether token\` (with the same --data-dir) shows it again.`;

/** --notify, --notify-config and --notify-allow-http as the daemon's notification options (it checks the URLs and the file). */
function notificationOptions(
  values: { notify?: string[]; 'notify-config'?: string; 'notify-allow-http'?: boolean },
  cwd: string,
): NotificationOptions | undefined {
  if (values.notify === undefined && values['notify-config'] === undefined) {
    if (values['notify-allow-http']) throw new UsageError('--notify-allow-http goes with --notify or --notify-config.');
    return undefined;
  }
  return {
    receivers: (values.notify ?? []).map((url) => ({ url })),
    ...(values['notify-config'] === undefined ? {} : { configFile: resolveGivenPath(values['notify-config'], cwd) }),
    ...(values['notify-allow-http'] ? { allowPlainHttp: true } : {}),
  };
}

/** `tether serve`: the daemon in the foreground until SIGTERM, SIGHUP, SIGQUIT or Ctrl-C, then a graceful shutdown. */
export async function serveCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseCommandLine(
    argv,
    {
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'data-dir': { type: 'string' },
        'allow-origin': { type: 'string', multiple: true },
        'claude-path': { type: 'string' },
        transport: { type: 'string' },
        'no-web': { type: 'boolean' },
        'startup-timeout': { type: 'string' },
        'shutdown-grace': { type: 'string' },
        'interaction-timeout': { type: 'string' },
        'agent-nice': { type: 'string' },
        'max-open-sessions': { type: 'string' },
        'worktree-root': { type: 'string' },
        store: { type: 'string' },
        'lease-ttl': { type: 'string' },
        'advertise-url': { type: 'string' },
        notify: { type: 'string', multiple: true },
        'notify-config': { type: 'string' },
        'notify-allow-http': { type: 'boolean' },
      },
    },
    serveUsage,
  );
  const port = values.port === undefined ? 7437 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port takes a number from 0 to 65535, not "${values.port}".`);
  if (fetchBlockedPorts.has(port))
    throw new UsageError(
      `--port ${port} is one of the ports browsers and fetch refuse to connect to (the Fetch standard's "bad ports"): the web UI, tether run and every client would fail there. Give another port (the default, 7437, or --port 0 for any free one).`,
    );
  const maxOpenSessions = values['max-open-sessions'] === undefined ? undefined : Number(values['max-open-sessions']);
  if (maxOpenSessions !== undefined && (!Number.isInteger(maxOpenSessions) || maxOpenSessions < 1)) {
    throw new UsageError(
      `--max-open-sessions takes a whole number of at least 1, not "${values['max-open-sessions']}".`,
    );
  }
  const agentNice = parseAgentNice(values['agent-nice']);
  const host = values.host ?? '127.0.0.1';
  const dataDir = resolveDataDir({ dataDir: values['data-dir'], environment: context.environment, cwd: context.cwd });
  const store = parseStoreLocation(values.store, context.environment);
  const leaseTtlMs = parseLeaseTtl(values['lease-ttl']);
  if (leaseTtlMs !== undefined && store.kind === 'data-dir')
    throw new UsageError(
      '--lease-ttl is for sessions kept in PostgreSQL (--store URL or --store embedded-postgres), where other daemons take over a lapsed lease; this daemon keeps its sessions in its data dir. Drop --lease-ttl, or give --store.',
    );
  const advertiseUrl = parseAdvertiseUrl(values['advertise-url']);
  const claudePath =
    values['claude-path'] === undefined ? undefined : resolveGivenPath(values['claude-path'], context.cwd);
  const transport = parseTransport(values.transport);
  const startupTimeoutMs = parseStartupTimeout(values['startup-timeout']);
  const shutdownGraceMs = secondsOption(
    values['shutdown-grace'],
    'shutdown-grace',
    (seconds) => seconds >= 0 && seconds <= 3600,
    'a number of seconds from 0 to 3600 (e.g. 10)',
  );
  const interactionTimeoutMs = secondsOption(
    values['interaction-timeout'],
    'interaction-timeout',
    (seconds) => seconds >= 1 && seconds <= 604_800,
    'a number of seconds from 1 to 604800 (e.g. 600)',
  );
  const notifications = notificationOptions(values, context.cwd);
  const webDirectory = values['no-web'] ? null : webUiDirectory();
  if (!values['no-web'] && webDirectory === null)
    context.stderr.write('tether serve: the web UI is not built (run `npm run build`); serving the API only.\n');
  const daemon = await startDaemon({
    dataDir,
    // Through the watched stdout: a reader gone (tether serve | head) stops the daemon as SIGHUP does.
    logDestination: context.stdout,
    openStore: (directory) =>
      openStore(directory, store, {
        leaseTtlMs,
        onNotice: (notice) => context.stderr.write(`tether serve: ${notice}\n`),
      }),
    ...(advertiseUrl === undefined ? {} : { advertiseUrl }),
    host,
    port,
    ...(shutdownGraceMs === undefined ? {} : { shutdownGraceMs }),
    providers: [
      createClaudeProvider({
        transport,
        environment: withoutStoreUrl(context.environment),
        ...(claudePath ? { claudePath } : {}),
        ...(startupTimeoutMs !== undefined ? { startupTimeoutMs } : {}),
        ...(agentNice === undefined ? {} : { agentNice }),
      }),
    ],
    ...(values['allow-origin'] ? { allowOrigins: values['allow-origin'] } : {}),
    ...(maxOpenSessions === undefined ? {} : { maxOpenSessions }),
    ...(interactionTimeoutMs === undefined ? {} : { interactionTimeoutMs }),
    ...(values['worktree-root'] === undefined
      ? {}
      : { worktreeRoot: resolveGivenPath(values['worktree-root'], context.cwd) }),
    ...(webDirectory === null ? {} : { staticDirectory: webDirectory }),
    ...(notifications === undefined ? {} : { notifications }),
  }).catch((error: unknown) => {
    throw listenRefusal(error, host, port) ?? error;
  });
  // The daemon's own judgement (127.0.0.0/8, ::1 bracketed or not, localhost), once it listens there:
  // the user reads this line on stderr; the daemon's warning of the address it bound goes to its JSON log.
  if (!isLoopbackHost(host)) {
    context.stderr.write(
      `tether serve: WARNING: listening on ${host} exposes the API beyond this machine; every request still needs the token.\n`,
    );
  }
  // The stop handlers (SIGINT, SIGTERM, SIGHUP, SIGQUIT) are in place before anyone can learn the URL.
  // They stay until the daemon has closed: a second signal (another Ctrl-C, the terminal closing during
  // the grace) hurries the close along rather than leaving the agents running.
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  /** Stops at once (the agents' process groups killed), the process ending at the signal deadline with `exitCode`. */
  const stopNow = (why: string, exitCode: number) => {
    context.stderr.write(`■ ${why}: stopping now (the agents are ended, their runs recorded as stopped)\n`);
    context.exitAfter(signalDeadlineMs, exitCode);
    void daemon.close({ force: true });
  };
  const removeStopHandler = context.onInterrupt((count, signal) => {
    if (count === 1) return stop();
    if (count === 2) return stopNow('second signal', signalExitCode(signal));
    void daemon.close({ force: true });
  });
  const where =
    store.kind === 'postgres'
      ? `data: ${dataDir}, sessions: ${store.description}`
      : store.kind === 'embedded-postgres'
        ? `data: ${dataDir}, sessions: embedded PostgreSQL`
        : `data: ${dataDir}`;
  context.stderr.write(`Tether daemon listening on ${daemon.url} (${where})\n`);
  if (webDirectory !== null) context.stderr.write(`web UI: ${daemon.url}/ (it asks for the token once per tab)\n`);
  // The path only: the secret itself is for the receivers' owner to copy, never for a log.
  // On every address, the daemon names itself by loopback: a link built from that opens nowhere but here.
  if (notifications !== undefined && advertiseUrl === undefined && !isLoopbackHost(host) && isLoopbackUrl(daemon.url))
    context.stderr.write(
      `tether serve: notifications' links point at ${daemon.url}, which opens only on this machine; pass --advertise-url with the address others reach this daemon at (e.g. --advertise-url http://my-host.lan:${daemon.port}).\n`,
    );
  if (daemon.notificationSecretFile !== null)
    context.stderr.write(
      `notifications: signed with the secret in ${daemon.notificationSecretFile} (unless a receiver has its own)\n`,
    );
  // Shown only to a person at a terminal: a service manager's captured output is a log, and logs never hold the token.
  // The command to read it names this data dir when it is not the one `tether token` reads by itself.
  const defaultDataDir = resolveDataDir({ dataDir: undefined, environment: context.environment, cwd: context.cwd });
  const token = `tether token${dataDir === defaultDataDir ? '' : ` --data-dir ${shellWord(dataDir)}`}`;
  if (context.terminal)
    context.stderr.write(
      `token: ${daemon.token}   (keep it secret; \`${token}\` shows it, \`${token} --rotate\` replaces it)\n`,
    );
  else context.stderr.write(`token: run \`${token}\` to show it (not printed: this output is not a terminal)\n`);
  await stopped;
  context.stderr.write('Tether daemon stopping…\n');
  // A store that stops answering (a PostgreSQL server hung, a network that drops packets) would hold
  // the close for ever, and the agents with it: past the grace and a bound, it stops as at a second signal.
  const overrunMs = (shutdownGraceMs ?? defaultShutdownGraceMs) + stopOverrunMs;
  let forced = false;
  const overrun = setTimeout(() => {
    forced = true;
    stopNow(
      `the daemon has not stopped ${Math.round(overrunMs / 1000)} s after the signal (is its store answering?)`,
      1,
    );
  }, overrunMs);
  overrun.unref();
  try {
    await daemon.close();
  } finally {
    clearTimeout(overrun);
    removeStopHandler();
  }
  // Forced, it did not stop as it should have, even when the forced close then ended in time.
  return forced ? 1 : 0;
}

/** How long past its grace a stop may run before it is forced (a store's own retries take about 10 s each). */
const stopOverrunMs = 30_000;

/** Why the port could not be taken, as the user can act on it; null for any other failure. */
function listenRefusal(error: unknown, host: string, port: number): UsageError | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE')
    return new UsageError(
      `${where} is already in use (another tether serve, or another program). Stop it, or give another port: --port N (--port 0 takes any free one).`,
    );
  if (code === 'EACCES')
    return new UsageError(
      `not allowed to listen on ${where} (ports below 1024 need privileges). Give a port from 1024 up: --port N.`,
    );
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new UsageError(
      `${host} is not an address of this machine${code === 'EADDRNOTAVAIL' ? '' : ' (no such name)'}. Give one it has with --host (default 127.0.0.1).`,
    );
  return null;
}

function isLoopbackUrl(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname);
}

/** A path as one shell word: as it is when it needs no quoting, else in single quotes. */
function shellWord(value: string): string {
  return /^[\w./~-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
