import path from 'node:path';
import { parseArgs } from 'node:util';
import { PermissionMode, SessionId } from '@tether/protocol';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore, resolveDataDir } from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { HumanRenderer } from '../render/human-renderer.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { exitCodeForRun, runTurn } from '../run-turn.js';
import { UsageError } from '../usage-error.js';

export const runUsage = `usage: tether run [--json] [--cwd DIR] [--model M] [--permission-mode MODE] [--resume SESSION]
                  [--data-dir DIR] [--claude-path PATH] "prompt"

  --json             one neutral event per line on stdout, nothing else
  --cwd DIR          the workspace directory (default: the current directory)
  --model M          a model name or alias for a new session
  --permission-mode  ${PermissionMode.options.join(' | ')}
  --resume SESSION   continue a session (its id is printed after every run)
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
    prompt: positionals[0]!,
  };
}

/** `tether run`: one turn in a new or resumed session, composed in-process. */
export async function runCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const options = parseRunOptions(argv, context);
  const store = await openSqliteStore({ dataDir: resolveDataDir({ dataDir: options.dataDir, environment: context.environment }) });
  const runtime = await createAgentRuntime({
    providers: [createClaudeProvider({ ...(options.claudePath ? { claudePath: options.claudePath } : {}), environment: context.environment })],
    store,
  });
  let stopping = false;
  const removeInterrupt = context.onInterrupt(() => {
    // Until the provider can interrupt a run, a stop shuts the runtime down: the run completes
    // as interrupted, the process ends, and the session can be resumed.
    if (stopping) return;
    stopping = true;
    context.stderr.write('\n■ stopping…\n');
    void runtime.shutdown();
  });
  try {
    let sessionId: string;
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
    const renderer = options.json ? new JsonRenderer(context.stdout) : new HumanRenderer(context.stdout, context.stderr);
    const run = await runTurn(runtime, { sessionId, prompt: options.prompt, afterSeq, sink: renderer });
    if (renderer instanceof HumanRenderer) renderer.summary(run, sessionId);
    return exitCodeForRun(run);
  } finally {
    removeInterrupt();
    await runtime.shutdown();
  }
}
