import { type AcpHost, type AcpLog, runAcpAgent } from '@tether/acp';
import { type ShutdownSignal, signalExitCode } from '@tether/runtime';
import { resolveDataDir, resolveGivenPath } from '@tether/store-sqlite';
import { daemonAcpHost } from '../acp/daemon-acp-host.js';
import { runtimeAcpHost } from '../acp/runtime-acp-host.js';
import { outputStream, stoppableInput } from '../acp/stdio-streams.js';
import type { CliContext } from '../cli-context.js';
import { connectDaemon } from '../connect-daemon.js';
import { createLocalRuntime, inProcessClaudeSettings } from '../local-runtime.js';
import { UsageError } from '../usage-error.js';
import { parseCommandLine } from './parse-command-line.js';
import { openStoreInProcess } from './local-or-daemon.js';
import { parseStoreLocation, storeHelp } from './store-option.js';
import { parseAgentNice } from './agent-nice-option.js';
import { parseStartupTimeout } from './startup-timeout-option.js';
import { parseTransport, transportHelp } from './transport-option.js';
import { signalDeadlineMs, signalGraceMs } from './turn-driver.js';

export const acpUsage = `usage: tether acp [--server URL] [--data-dir DIR] [--store URL] [--worktree-root DIR]
                  [--claude-path PATH] [--transport cli|sdk] [--startup-timeout SECONDS] [--agent-nice N]

  An Agent Client Protocol agent on stdin/stdout, for editors and tools that speak ACP (Zed,
  JetBrains, Neovim, acpx): nothing but protocol on stdout, logs on stderr (docs/acp.md).
  Ends when the client closes stdin (or on SIGINT, SIGTERM, SIGHUP, SIGQUIT): the runs its prompts were
  waiting for are interrupted and, in-process, every agent process ends.

  --server URL       bridge to the daemon at URL (token: $TETHER_TOKEN or the data dir's): its
                     sessions keep running when the editor quits
                     (when a daemon owns the data dir, acp goes through it on its own)
  --data-dir DIR     where sessions are stored (default: $TETHER_HOME or ~/.tether)
  ${storeHelp}
                     (in-process only: a daemon uses the store it was started with)
  --worktree-root DIR  where worktrees are made (default: <data dir>/worktrees; in-process only)
  --claude-path PATH the claude executable (default: TETHER_CLAUDE_PATH, PATH, usual locations)
  ${transportHelp}
                     (in-process only: a daemon uses the transport it was started with)
  --startup-timeout SECONDS  fail the run (provider_stalled) when a starting claude writes
                     nothing for this long (default 120; in-process only)
  --agent-nice N     run claude N nicer than tether while more than one runs, 0-19 (default 10:
                     agents yield the CPU when they saturate the machine; 0: as tether; in-process only)

exit codes: 0 the client closed the connection, 1 Tether could not start (e.g. the data dir in use
by another Tether process, the store out of reach: said on stderr, at once, the client's requests
unanswered), 2 usage error (also --server without a token), 130/143/129/131 stopped by SIGINT/SIGTERM/SIGHUP/SIGQUIT`;

function parseAcpOptions(argv: readonly string[], context: CliContext) {
  const { values, positionals } = parseCommandLine(
    argv,
    {
      allowPositionals: true,
      options: {
        server: { type: 'string' },
        'data-dir': { type: 'string' },
        store: { type: 'string' },
        'worktree-root': { type: 'string' },
        'claude-path': { type: 'string' },
        transport: { type: 'string' },
        'startup-timeout': { type: 'string' },
        'agent-nice': { type: 'string' },
      },
    },
    acpUsage,
  );
  if (positionals.length > 0)
    throw new UsageError(`tether acp takes no arguments (prompts come from the ACP client).\n\n${acpUsage}`);
  const resolved = (value: string | undefined) =>
    value === undefined ? undefined : resolveGivenPath(value, context.cwd);
  return {
    server: values.server,
    dataDir: resolveDataDir({ dataDir: values['data-dir'], environment: context.environment, cwd: context.cwd }),
    store: parseStoreLocation(values.store, context.environment),
    worktreeRoot: resolved(values['worktree-root']),
    claudePath: resolved(values['claude-path']),
    transport: parseTransport(values.transport),
    startupTimeoutMs: parseStartupTimeout(values['startup-timeout']),
    agentNice: parseAgentNice(values['agent-nice']),
  };
}

/** Log lines on stderr: stdout belongs to the protocol. */
function stderrLog(context: CliContext): AcpLog {
  const write = (message: string, fields?: Readonly<Record<string, unknown>>) =>
    context.stderr.write(`tether acp: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`);
  return { info: write, error: write };
}

/**
 * `tether acp`: serves one ACP client over stdin/stdout, through the daemon at --server (or the
 * local one that owns the data dir), else with a runtime in this process that shuts down, every
 * agent process with it, when the client goes away or a signal arrives.
 */
export async function acpCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const options = parseAcpOptions(argv, context);
  const input = stoppableInput(context.stdin, {
    // The SDK's reason (e.g. a message past its size limit) names no client data: safe for the log.
    cancelled: (reason) =>
      context.stderr.write(
        `tether acp: stopped reading the client${reason instanceof Error ? ` (${reason.message})` : ''}; ending as if it had closed the connection.\n`,
      ),
  });
  // An editor that died mid-write has quit: end as on EOF (the write error would kill this process, not its agents).
  const removeOutputWatch = context.onOutputClosed?.(() => input.stop());
  try {
    return await serveClient(options, context, input);
  } catch (error) {
    // Tether could not start (the data dir in use, the store out of reach): nothing will answer the
    // client, and stdin read on would keep this process, and the editor waiting on it, alive.
    input.stop();
    throw error;
  } finally {
    removeOutputWatch?.();
  }
}

async function serveClient(
  options: ReturnType<typeof parseAcpOptions>,
  context: CliContext,
  input: ReturnType<typeof stoppableInput>,
): Promise<number> {
  const log = stderrLog(context);
  const serve = (host: AcpHost, runsOutliveClient: boolean) =>
    runAcpAgent({ host, input: input.stream, output: outputStream(context.stdout), log, runsOutliveClient });
  let ending: ShutdownSignal | null = null;
  const daemon = await connectDaemon({
    server: options.server,
    dataDir: options.dataDir,
    environment: context.environment,
    // The editor's prompt waits while the daemon is away: its log says why (the editor's Stop ends the wait).
    notices: { write: (text) => context.stderr.write(text), stopHint: " (the editor's Stop ends the prompt)" },
  });
  if (daemon) {
    const removeStop = context.onInterrupt((_count, signal) => {
      ending ??= signal;
      context.exitAfter(signalDeadlineMs, signalExitCode(ending));
      // As if the editor quit: the runs go on in the daemon (the web UI and tether attach can follow them).
      input.stop();
    });
    try {
      // The daemon owns the sessions: a turn the editor started goes on after the editor quits.
      await serve(daemonAcpHost(daemon), true);
    } finally {
      removeStop();
    }
    return ending === null ? 0 : signalExitCode(ending);
  }
  const runtime = await createLocalRuntime({
    claude: inProcessClaudeSettings(options, context.environment),
    store: await openStoreInProcess(options.dataDir, options.store, context.stderr),
    dataDir: options.dataDir,
    environment: context.environment,
    worktreeRoot: options.worktreeRoot,
  });
  // A signal ends the runs, the agent's processes and the store within the grace (at once on a second one), as for `tether run`.
  const removeStop = context.onInterrupt((count, signal) => {
    ending ??= signal;
    context.exitAfter(signalDeadlineMs, signalExitCode(ending));
    void runtime.shutdown({ graceMs: count > 1 ? 0 : signalGraceMs, force: true });
    input.stop();
  });
  try {
    await serve(runtimeAcpHost(runtime), false);
  } finally {
    await runtime.shutdown();
    removeStop();
  }
  return ending === null ? 0 : signalExitCode(ending);
}
