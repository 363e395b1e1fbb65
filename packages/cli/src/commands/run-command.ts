import { AgentError, PermissionMode, SessionId } from '@tether/protocol';
import type { ClaudeTransport } from '@tether/provider-claude';
import { signalExitCode } from '@tether/runtime';
import { resolveDataDir, resolveGivenPath } from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { checkAnswersSource } from '../interactions/answers-source.js';
import type { ResponderMode } from '../interactions/interaction-responder.js';
import { TerminalPrompter } from '../interactions/terminal-prompter.js';
import { connectDaemon } from '../connect-daemon.js';
import { createLocalRuntime, inProcessClaudeSettings } from '../local-runtime.js';
import { parseAgentNice } from './agent-nice-option.js';
import { parseStartupTimeout } from './startup-timeout-option.js';
import { parseTransport, transportHelp } from './transport-option.js';
import { daemonTurnStopper } from './daemon-turn-stopper.js';
import { closeReopened, discardSession } from './session-cleanup.js';
import { type TurnStopper, type WorktreeRequest, driveTurn, signalDeadlineMs, signalGraceMs } from './turn-driver.js';
import { UsageError } from '../usage-error.js';
import { checkPromptSource, checkPromptText, promptFromStdin, readPrompt } from './prompt-argument.js';
import { parseCommandLine } from './parse-command-line.js';
import { openStore } from '../open-store.js';
import { openStoreInProcess } from './local-or-daemon.js';
import { type StoreLocation, parseStoreLocation, storeHelp } from './store-option.js';
import { type TurnAttachments, attachmentHelp, attachmentOptions, parseAttachments } from './attachment-options.js';

export const runUsage = `usage: tether run [--json] [--cwd DIR] [--worktree [--base REF] [--branch NAME]] [--model M]
                  [--permission-mode MODE] [--resume SESSION] [--image PATH]... [--file PATH]...
                  [--approve ask|allow-once|deny] [--answers FILE|-] [--server URL] [--data-dir DIR]
                  [--store URL] [--worktree-root DIR] [--claude-path PATH] [--transport cli|sdk] [--startup-timeout SECONDS] [--agent-nice N] "prompt"

  "prompt"           the turn's text; - reads it from stdin to its end instead (then it does not
                     show in ps, and a terminal cannot be asked: give --answers or --approve)
  --json             one neutral event per line on stdout, nothing else
  --cwd DIR          the workspace directory (default: the current directory); with --resume
                     only the session's own directory is accepted
  --worktree         work in a new git worktree of the repository at --cwd, on a new branch
                     (default tether/<short session id>), so sessions never edit the same files;
                     closing the session removes it if it holds no work and keeps it otherwise
  --base REF         with --worktree: where the branch starts (default: the repository's HEAD)
  --branch NAME      with --worktree: the new branch's name (refused if it exists)
  --model M          a model name or alias for a new session; with --resume, the session's model
                     from this turn on (as set_model; so does --permission-mode for its mode)
  --permission-mode  ${PermissionMode.options.join(' | ')}
  --resume SESSION   continue a session (its id is printed after every run)
${attachmentHelp}
                     (paths from the current directory; a daemon reads them on its own machine)
  --approve          ask (default: at a terminal; elsewhere prompts are denied), allow-once, deny
  --answers FILE|-   answers to prompts, one JSON object per line: {"ref": "...", "answer": {...}};
                     a file is followed as it grows (like tail -f) until the run ends, - (stdin)
                     and a FIFO are read to their end (then prompts are denied)
  --server URL       run through the daemon at URL (token: $TETHER_TOKEN or the data dir's)
                     (when a daemon owns the data dir, run goes through it on its own)
  --data-dir DIR     where sessions are stored (default: $TETHER_HOME or ~/.tether)
  ${storeHelp}
                     (in-process only: a daemon uses the store it was started with)
  --worktree-root DIR  where worktrees are made (default: <data dir>/worktrees; in-process only:
                     a daemon uses its own, set by tether serve --worktree-root)
  --claude-path PATH the claude executable (default: TETHER_CLAUDE_PATH, PATH, usual locations)
  ${transportHelp}
                     (in-process only: a daemon uses the transport it was started with)
  --startup-timeout SECONDS  fail the run (provider_stalled) when a starting claude writes
                     nothing for this long (default 120; in-process only, like --transport)
  --agent-nice N     run claude N nicer than tether while more than one runs, 0-19 (default 10:
                     agents yield the CPU when they saturate the machine; 0: as tether;
                     in-process only, like --transport)

exit codes: 0 succeeded, 1 failed, 2 usage error, 130 interrupted (Ctrl-C), 143 stopped by SIGTERM,
129 stopped by SIGHUP, 131 stopped by SIGQUIT (Ctrl-\\) (the run is stopped and recorded as interrupted,
the agent's processes ended)`;

const runExample = 'tether run "explain this repository"';

interface RunOptions {
  readonly json: boolean;
  readonly cwd: string;
  /** --worktree: a new git worktree of the repository at cwd. */
  readonly worktree: WorktreeRequest | undefined;
  readonly worktreeRoot: string | undefined;
  readonly model: string | undefined;
  readonly permissionMode: PermissionMode | undefined;
  readonly resume: string | undefined;
  readonly dataDir: string | undefined;
  readonly store: StoreLocation;
  readonly claudePath: string | undefined;
  readonly transport: ClaudeTransport;
  readonly startupTimeoutMs: number | undefined;
  readonly agentNice: number | undefined;
  /** Given with --resume: the session's workspace must be this directory. */
  readonly resumeCwd: string | undefined;
  readonly approve: 'ask' | 'allow-once' | 'deny';
  readonly answers: string | undefined;
  readonly server: string | undefined;
  readonly prompt: string;
  readonly attachments: TurnAttachments;
  /** The in-process-only options given (--store, --claude-path…): a daemon that runs the turn ignores them, and says so. */
  readonly inProcessOnly: readonly string[];
}

/** Options that set up a runtime in this process: a daemon runs turns with those it was started with. */
const inProcessOnlyOptions = [
  'store',
  'claude-path',
  'transport',
  'startup-timeout',
  'agent-nice',
  'worktree-root',
] as const;

function parseRunOptions(argv: readonly string[], context: CliContext): RunOptions {
  const { values, positionals } = parseCommandLine(
    argv,
    {
      allowPositionals: true,
      options: {
        json: { type: 'boolean', default: false },
        cwd: { type: 'string' },
        worktree: { type: 'boolean', default: false },
        base: { type: 'string' },
        branch: { type: 'string' },
        'worktree-root': { type: 'string' },
        model: { type: 'string' },
        'permission-mode': { type: 'string' },
        resume: { type: 'string' },
        'data-dir': { type: 'string' },
        store: { type: 'string' },
        'claude-path': { type: 'string' },
        approve: { type: 'string' },
        answers: { type: 'string' },
        server: { type: 'string' },
        transport: { type: 'string' },
        'startup-timeout': { type: 'string' },
        'agent-nice': { type: 'string' },
        ...attachmentOptions,
      },
    },
    runUsage,
  );
  if (positionals.length === 1 && positionals[0] !== promptFromStdin) checkPromptText(positionals[0]!, runExample);
  if (positionals.length !== 1) {
    throw new UsageError(
      `tether run needs exactly one prompt argument (quote it, or give - to read it from stdin).\n\n${runUsage}`,
    );
  }
  checkPromptSource(positionals[0]!, values.answers);
  const mode = values['permission-mode'];
  if (mode !== undefined && !PermissionMode.safeParse(mode).success) {
    throw new UsageError(`Unknown permission mode "${mode}". Use one of: ${PermissionMode.options.join(', ')}.`);
  }
  const approve = values.approve ?? 'ask';
  if (approve !== 'ask' && approve !== 'allow-once' && approve !== 'deny') {
    throw new UsageError(`--approve takes ask, allow-once or deny, not "${approve}".`);
  }
  if (values.answers !== undefined && approve !== 'ask') {
    throw new UsageError(
      '--answers supplies answers to prompts; it cannot be combined with --approve allow-once or deny.',
    );
  }
  if (values.resume !== undefined && !SessionId.safeParse(values.resume).success) {
    throw new UsageError(
      `"${values.resume}" is not a Tether session id (it looks like ses_ followed by 32 hex digits).`,
    );
  }
  if (!values.worktree && (values.base !== undefined || values.branch !== undefined)) {
    throw new UsageError('--base and --branch set up a worktree: add --worktree (with --cwd naming the repository).');
  }
  if (values.worktree && values.resume !== undefined) {
    throw new UsageError(
      '--worktree sets up a new session; a resumed session keeps its own workspace. Drop --worktree, or start a new session without --resume.',
    );
  }
  return {
    json: values.json ?? false,
    cwd: resolveGivenPath(values.cwd ?? '.', context.cwd),
    worktree: values.worktree
      ? {
          ...(values.base !== undefined ? { baseRef: values.base } : {}),
          ...(values.branch !== undefined ? { branch: values.branch } : {}),
        }
      : undefined,
    worktreeRoot:
      values['worktree-root'] === undefined ? undefined : resolveGivenPath(values['worktree-root'], context.cwd),
    model: values.model,
    permissionMode: mode as PermissionMode | undefined,
    resume: values.resume,
    dataDir: values['data-dir'],
    store: parseStoreLocation(values.store, context.environment),
    claudePath: values['claude-path'] === undefined ? undefined : resolveGivenPath(values['claude-path'], context.cwd),
    transport: parseTransport(values.transport),
    startupTimeoutMs: parseStartupTimeout(values['startup-timeout']),
    agentNice: parseAgentNice(values['agent-nice']),
    resumeCwd:
      values.resume !== undefined && values.cwd !== undefined ? resolveGivenPath(values.cwd, context.cwd) : undefined,
    approve,
    answers:
      values.answers === undefined || values.answers === '-'
        ? values.answers
        : resolveGivenPath(values.answers, context.cwd),
    server: values.server,
    prompt: positionals[0]!,
    attachments: parseAttachments(values, context),
    inProcessOnly: inProcessOnlyOptions.filter((name) => values[name] !== undefined).map((name) => `--${name}`),
  };
}

/**
 * How prompts get answered: at the terminal, from --answers, allowed once, or denied. With nobody
 * to ask (no terminal, or --json) and no --answers or --approve, `nobodyToAsk` says what is done:
 * a run denies them (it would wait forever), a watcher leaves them to whoever can answer. A prompt
 * read from stdin has used it up, so the terminal cannot be asked either.
 */
export function responderMode(
  options: {
    approve: 'ask' | 'allow-once' | 'deny';
    answers: string | undefined;
    json: boolean;
    prompt?: string;
  },
  context: CliContext,
  nobodyToAsk: 'deny' | 'watch' = 'deny',
): ResponderMode {
  if (options.approve === 'deny') {
    // Said once, as the other ways a prompt goes unasked are: a denial here is never a surprise.
    if (!options.json) context.stderr.write('tether: --approve deny: tool prompts and questions will be denied.\n');
    return { kind: 'deny', chosen: true };
  }
  if (options.approve === 'allow-once') return { kind: 'allow-once' };
  if (options.answers !== undefined) {
    if (options.answers !== '-') checkAnswersSource(options.answers);
    return { kind: 'answers', source: options.answers, stdin: context.stdin };
  }
  if (!options.json && context.terminal && options.prompt !== promptFromStdin)
    return { kind: 'terminal', prompter: new TerminalPrompter(context.terminal.input, context.terminal.output) };
  return { kind: nobodyToAsk };
}

/** Said before the turn when its prompts will be denied only because nobody here can be asked (run and send alike). */
export function warnIfNobodyToAsk(
  mode: ResponderMode,
  options: {
    readonly approve: 'ask' | 'allow-once' | 'deny';
    readonly json: boolean;
    readonly prompt: string;
    /** tether send --steer: a run it goes into is another caller's, whose prompts it leaves to them. */
    readonly steer?: boolean;
  },
  context: CliContext,
): void {
  if (mode.kind !== 'deny' || options.approve !== 'ask' || options.json) return;
  if (options.steer === true) {
    context.stderr.write(
      'tether: nobody to ask here: the prompts of the run this steers into are left to its caller; if nothing is running, the prompt runs as a turn of its own, whose prompts will be denied.\n',
    );
    return;
  }
  context.stderr.write(
    options.prompt === promptFromStdin && context.terminal
      ? 'tether: stdin carried the prompt and no --answers was given: tool prompts and questions will be denied.\n'
      : 'tether: no terminal to ask at and no --answers: tool prompts and questions will be denied.\n',
  );
}

/** `tether run`: one turn in a new or resumed session, through the local daemon if one owns the data dir, else in-process. */
export async function runCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const options = parseRunOptions(argv, context);
  const mode = responderMode(options, context);
  const prompt = await readPrompt(options.prompt, context, runExample);
  const request = {
    resume: options.resume,
    cwd: options.cwd,
    worktree: options.worktree,
    model: options.model,
    permissionMode: options.permissionMode,
    prompt,
    attachments: options.attachments,
    json: options.json,
    ...(options.resumeCwd !== undefined ? { resumeCwd: options.resumeCwd } : {}),
  };
  const dataDir = resolveDataDir({ dataDir: options.dataDir, environment: context.environment, cwd: context.cwd });
  const daemon = await connectDaemon({
    server: options.server,
    dataDir,
    environment: context.environment,
    notices: context.stderr,
  });
  // Said as the turn goes out: a --server, token or data dir error, or a refusal of the turn (a missing
  // --cwd, an unknown --resume), comes alone.
  const warnNobodyToAsk = () => warnIfNobodyToAsk(mode, options, context);
  if (daemon) {
    if (options.inProcessOnly.length > 0)
      context.stderr.write(
        `tether run: ${options.inProcessOnly.join(', ')} ignored: the daemon runs the turn with the settings it was started with (give them to tether serve, or stop it to run in this process).\n`,
      );
    return driveTurn(
      daemon,
      { ...request, responder: mode, beforeSending: warnNobodyToAsk },
      context,
      daemonTurnStopper(daemon),
    );
  }
  // In-process: the provider itself denies prompts nobody can answer, so none is ever raised. Ones
  // the user chose to deny (--approve deny) are raised and denied as through a daemon: the model is
  // told that the user chose it, and the log has each prompt and its answer.
  const denyInProvider = mode.kind === 'deny' && mode.chosen !== true;
  const runtime = await createLocalRuntime({
    claude: {
      ...inProcessClaudeSettings(options, context.environment),
      ...(denyInProvider ? ({ approvals: 'deny', questions: 'deny' } as const) : {}),
    },
    store: await openStoreInProcess(dataDir, options.store, context.stderr),
    dataDir,
    environment: context.environment,
    worktreeRoot: options.worktreeRoot,
  });
  let interrupted: string | null = null;
  let unused: string | null = null;
  let reopened: string | null = null;
  // A signal ends the run, the agent's processes and the store within the grace (forced after it).
  const stopper: TurnStopper = {
    terminate: (_signal, _turn, urgent) => void runtime.shutdown({ graceMs: urgent ? 0 : signalGraceMs, force: true }),
    interruptedByUser: (sessionId) => (interrupted = sessionId),
    // The runtime is shutting down and takes no command: discarded once it is down.
    discardUnused: async (sessionId) => {
      unused = sessionId;
    },
    closeUnused: async (sessionId) => {
      reopened = sessionId;
    },
  };
  // A signal while closing down hurries it along instead of killing this process mid-way. After a
  // first Ctrl-C stopped the run, a Ctrl-C then is the second: it closes the session, once the
  // runtime is down (it takes no command while it shuts down). Listening from before the turn: one
  // that came as driveTurn stops listening would otherwise find no listener (and kill this process)
  // or be dropped with driveTurn's.
  let closingDown = false;
  let closing: string | null = null;
  // The runtime is down and this command has returned: the process is exiting.
  let finished = false;
  const removeHurry = context.onInterrupt((_count, signal) => {
    if (!closingDown) return;
    context.exitAfter(signalDeadlineMs, signalExitCode(signal));
    if (signal === 'SIGINT' && interrupted !== null && closing === null) {
      context.stderr.write('\n■ closing the session…\n');
      closing = interrupted;
      // Too late for the steps below: closed now, the process kept until it is.
      if (finished) void afterShutdown('close', closing, options, dataDir, context);
    }
    void runtime.shutdown({ graceMs: 0, force: true });
  });
  try {
    return await driveTurn(
      runtime,
      {
        ...request,
        responder: denyInProvider ? null : mode,
        runEnd: (runId) => runtime.waitForRun(runId),
        beforeSending: warnNobodyToAsk,
      },
      context,
      stopper,
    );
  } finally {
    closingDown = true;
    await runtime.shutdown();
    if (closing !== null) await afterShutdown('close', closing, options, dataDir, context);
    else if (unused !== null) await afterShutdown('discard', unused, options, dataDir, context);
    else if (reopened !== null) await afterShutdown('close_reopened', reopened, options, dataDir, context);
    finished = true;
    // After a first Ctrl-C, a second one closes the session until this process has exited (docs/cli.md),
    // including in the ~0.1-0.2 s Node takes to exit after this: a listener holds nothing open.
    if (interrupted === null || closing !== null) removeHurry();
  }
}

/**
 * Closes a session (a second Ctrl-C, or one reopened for a turn a signal stopped before it went in),
 * or discards one opened for such a turn, once this command's runtime is down, in a runtime of its own
 * over the same store.
 */
async function afterShutdown(
  action: 'close' | 'close_reopened' | 'discard',
  sessionId: string,
  options: RunOptions,
  dataDir: string,
  context: CliContext,
) {
  try {
    const store = await openStore(dataDir, options.store);
    const runtime = await createLocalRuntime({
      claude: inProcessClaudeSettings(options, context.environment),
      store,
      dataDir,
      environment: context.environment,
      worktreeRoot: options.worktreeRoot,
    }).catch(async (error: unknown) => {
      await store.close();
      throw error;
    });
    try {
      if (action === 'close') await runtime.closeSession({ sessionId });
      else if (action === 'close_reopened') await closeReopened(runtime, sessionId);
      else await discardSession(runtime, sessionId);
    } finally {
      await runtime.shutdown({ graceMs: 0, force: true });
    }
  } catch (error) {
    const message = AgentError.isInstance(error) ? `${error.message} [${error.code}]` : String(error);
    context.stderr.write(
      `tether run: the session ${action !== 'discard' ? 'was not closed' : `opened for the stopped turn was not deleted (tether delete ${sessionId})`}: ${message}\n`,
    );
  }
}
