import path from 'node:path';
import { parseArgs } from 'node:util';
import { PermissionMode, type ProtocolEvent, SessionId } from '@tether/protocol';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore, resolveDataDir } from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { InteractionResponder, type ResponderMode } from '../interactions/interaction-responder.js';
import { TerminalPrompter } from '../interactions/terminal-prompter.js';
import { HumanRenderer } from '../render/human-renderer.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { exitCodeForRun, runTurn } from '../run-turn.js';
import { UsageError } from '../usage-error.js';

export const runUsage = `usage: tether run [--json] [--cwd DIR] [--model M] [--permission-mode MODE] [--resume SESSION]
                  [--approve ask|allow-once|deny] [--answers FILE|-]
                  [--data-dir DIR] [--claude-path PATH] "prompt"

  --json             one neutral event per line on stdout, nothing else
  --cwd DIR          the workspace directory (default: the current directory)
  --model M          a model name or alias for a new session
  --permission-mode  ${PermissionMode.options.join(' | ')}
  --resume SESSION   continue a session (its id is printed after every run)
  --approve          ask (default: at a terminal; elsewhere prompts are denied), allow-once, deny
  --answers FILE|-   answers to prompts, one JSON object per line: {"ref": "...", "answer": {...}}
  --data-dir DIR     where sessions are stored (default: $TETHER_HOME or ~/.tether)
  --claude-path PATH the claude executable (default: TETHER_CLAUDE_PATH, PATH, usual locations)

exit codes: 0 succeeded, 1 failed, 2 usage error, 130 interrupted`;

interface RunOptions {
  readonly json: boolean;
  readonly cwd: string;
  readonly model: string | undefined;
  readonly permissionMode: PermissionMode | undefined;
  readonly resume: string | undefined;
  readonly dataDir: string | undefined;
  readonly claudePath: string | undefined;
  readonly approve: 'ask' | 'allow-once' | 'deny';
  readonly answers: string | undefined;
  readonly prompt: string;
}

function parseRunOptions(argv: readonly string[], context: CliContext): RunOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean', default: false },
        cwd: { type: 'string' },
        model: { type: 'string' },
        'permission-mode': { type: 'string' },
        resume: { type: 'string' },
        'data-dir': { type: 'string' },
        'claude-path': { type: 'string' },
        approve: { type: 'string' },
        answers: { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${runUsage}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1 || positionals[0]!.trim().length === 0) {
    throw new UsageError(`tether run needs exactly one prompt argument (quote it).\n\n${runUsage}`);
  }
  const mode = values['permission-mode'];
  if (mode !== undefined && !PermissionMode.safeParse(mode).success) {
    throw new UsageError(`Unknown permission mode "${mode}". Use one of: ${PermissionMode.options.join(', ')}.`);
  }
  const approve = values.approve ?? 'ask';
  if (approve !== 'ask' && approve !== 'allow-once' && approve !== 'deny') {
    throw new UsageError(`--approve takes ask, allow-once or deny, not "${approve}".`);
  }
  if (values.answers !== undefined && approve !== 'ask') {
    throw new UsageError('--answers supplies answers to prompts; it cannot be combined with --approve allow-once or deny.');
  }
  if (values.resume !== undefined && !SessionId.safeParse(values.resume).success) {
    throw new UsageError(`"${values.resume}" is not a Tether session id (it looks like ses_ followed by 32 hex digits).`);
  }
  if (values.resume !== undefined && (values.model !== undefined || mode !== undefined || values.cwd !== undefined)) {
    throw new UsageError('--model, --permission-mode and --cwd set up a new session; a resumed session keeps its own. Drop them, or start a new session without --resume.');
  }
  return {
    json: values.json ?? false,
    cwd: path.resolve(context.cwd, values.cwd ?? '.'),
    model: values.model,
    permissionMode: mode as PermissionMode | undefined,
    resume: values.resume,
    dataDir: values['data-dir'] === undefined ? undefined : path.resolve(context.cwd, values['data-dir']),
    claudePath: values['claude-path'] === undefined ? undefined : path.resolve(context.cwd, values['claude-path']),
    approve,
    answers: values.answers === undefined || values.answers === '-' ? values.answers : path.resolve(context.cwd, values.answers),
    prompt: positionals[0]!,
  };
}

/** How prompts get answered: at the terminal, from --answers, allowed once, or denied by the provider. */
function responderMode(options: RunOptions, context: CliContext): ResponderMode | 'deny' {
  if (options.approve === 'deny') return 'deny';
  if (options.approve === 'allow-once') return { kind: 'allow-once' };
  if (options.answers !== undefined) return { kind: 'answers', source: options.answers, stdin: context.stdin };
  if (!options.json && context.terminal) return { kind: 'terminal', prompter: new TerminalPrompter(context.terminal.input, context.terminal.output) };
  return 'deny';
}

/** `tether run`: one turn in a new or resumed session, composed in-process. */
export async function runCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const options = parseRunOptions(argv, context);
  const mode = responderMode(options, context);
  const policy = mode === 'deny' ? ({ approvals: 'deny', questions: 'deny' } as const) : {};
  if (mode === 'deny' && options.approve === 'ask' && !options.json) {
    context.stderr.write('tether: no terminal to ask at and no --answers: tool prompts and questions will be denied.\n');
  }
  const store = await openSqliteStore({ dataDir: resolveDataDir({ dataDir: options.dataDir, environment: context.environment }) });
  const runtime = await createAgentRuntime({
    providers: [createClaudeProvider({ ...(options.claudePath ? { claudePath: options.claudePath } : {}), environment: context.environment, ...policy })],
    store,
  });
  let responder: InteractionResponder | null = null;
  let sessionId: string | undefined;
  const removeInterrupt = context.onInterrupt((count) => {
    // First Ctrl-C stops the run (it completes as interrupted, exit 130); a second closes the session.
    if (sessionId === undefined) {
      void runtime.shutdown();
      return;
    }
    if (count === 1) {
      context.stderr.write('\n■ stopping the run (Ctrl-C again closes the session)…\n');
      runtime.interruptRun({ sessionId }).catch(() => runtime.shutdown());
    } else if (count === 2) {
      context.stderr.write('\n■ closing the session…\n');
      runtime.closeSession({ sessionId }).catch(() => undefined).finally(() => void runtime.shutdown());
    }
  });
  try {
    let afterSeq: number;
    if (options.resume !== undefined) {
      const before = await runtime.getSession(options.resume);
      afterSeq = before.lastSeq;
      await runtime.openSession({ continueSession: options.resume });
      sessionId = options.resume;
    } else {
      const opened = await runtime.openSession({
        workspace: { kind: 'directory', path: options.cwd },
        ...(options.model !== undefined ? { model: options.model } : {}),
        ...(options.permissionMode !== undefined ? { permissionMode: options.permissionMode } : {}),
      });
      sessionId = opened.sessionId;
      afterSeq = 0;
    }
    const renderer = options.json ? new JsonRenderer(context.stdout) : new HumanRenderer(context.stdout, context.stderr, { promptsShownElsewhere: mode !== 'deny' && mode.kind === 'terminal' });
    const activeResponder = mode === 'deny' ? null : new InteractionResponder({ runtime, sessionId: sessionId!, mode, stderr: context.stderr });
    responder = activeResponder;
    const sink = {
      event(event: ProtocolEvent) {
        renderer.event(event);
        if (event.type === 'interaction.requested') activeResponder?.onRequested(event);
      },
    };
    const run = await runTurn(runtime, { sessionId: sessionId!, prompt: options.prompt, afterSeq, sink });
    if (renderer instanceof HumanRenderer) renderer.summary(run, sessionId!);
    return exitCodeForRun(run);
  } finally {
    removeInterrupt();
    responder?.close();
    await runtime.shutdown();
  }
}
