import { resolveGivenPath } from '@tether/store-sqlite';
import { AgentError, type ModelDescription, type ModelList } from '@tether/protocol';
import type { TetherBackend } from '../tether-backend.js';
import type { CliContext } from '../cli-context.js';
import { terminalSafe } from '../render/human-renderer.js';
import { UsageError } from '../usage-error.js';
import { parseDaemonCommand } from './daemon-options.js';
import { withLocalOrDaemon } from './local-or-daemon.js';
import { parseTransport, transportHelp } from './transport-option.js';

export const modelsUsage = `usage: tether models [--provider NAME] [--transport cli|sdk] [--claude-path PATH] [--json] [--server URL] [--data-dir DIR]
  The models the agent offers (what --model and the web UI's picker take): id, name, description.
  --provider NAME    whose list (default: the default provider, claude)
  ${transportHelp}
                     (in-process only: a daemon uses the transport it was started with)
  --claude-path PATH the claude binary to ask (in-process only, as for tether run)
  --json             the list as the API answers it (GET /v1/providers/:name/models)`;

function table(models: readonly ModelDescription[]): string {
  const rows = models.map((model) => [model.id, model.displayName, model.description].map(terminalSafe));
  const header = ['ID', 'NAME', 'DESCRIPTION'];
  const widths = [0, 1].map((column) => Math.max(header[column]!.length, ...rows.map((row) => row[column]!.length)));
  return [header, ...rows]
    .map(([id, name, description]) =>
      `${id!.padEnd(widths[0]!)}  ${name!.padEnd(widths[1]!)}  ${description}`.trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** `tether models`: the agent's model list, from the daemon if one runs, else from the agent itself. */
export async function modelsCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, modelsUsage, {
    provider: { type: 'string' },
    transport: { type: 'string' },
    'claude-path': { type: 'string' },
  });
  if (command.positionals.length > 0)
    throw new UsageError(`tether models takes no arguments (whose list: --provider NAME).\n\n${modelsUsage}`);
  const transport = parseTransport(command.values.transport as string | undefined);
  const provider = command.values.provider as string | undefined;
  const claudePathOption = command.values['claude-path'] as string | undefined;
  const inProcessOnly = (['transport', 'claude-path'] as const)
    .filter((name) => command.values[name] !== undefined)
    .map((name) => `--${name}`);
  // The list needs no session: in-process, the data dir is left alone (another process may hold it).
  const list = await withLocalOrDaemon(
    command,
    context,
    (backend) => {
      // A list of another binary or transport than the one asked for, unsaid, would read as theirs.
      if (!backend.inProcess && inProcessOnly.length > 0)
        context.stderr.write(
          `tether models: ${inProcessOnly.join(', ')} ignored: the daemon lists the models of the agent it was started with (give them to tether serve, or stop it to ask in this process).\n`,
        );
      return listOf(backend.tether, provider);
    },
    {
      store: 'none',
      transport,
      ...(claudePathOption === undefined ? {} : { claudePath: resolveGivenPath(claudePathOption, context.cwd) }),
    },
  );
  if (command.values.json) {
    context.stdout.write(`${JSON.stringify(list)}\n`);
    return 0;
  }
  if (list.models.length === 0) context.stderr.write('The agent lists no models.\n');
  else context.stdout.write(table(list.models));
  return 0;
}

/**
 * The list, an unknown --provider a usage error however it was asked: the runtime refuses it
 * invalid_command, the daemon's route 404 route_not_found (the API's words for a missing resource).
 */
async function listOf(tether: Pick<TetherBackend, 'listModels'>, provider: string | undefined): Promise<ModelList> {
  try {
    return await tether.listModels(provider);
  } catch (error) {
    if (AgentError.isInstance(error) && error.details?.reason === 'unknown_provider')
      throw new UsageError(`--provider: ${error.message.replace(/ \(GET \/v1\/providers lists them\)/, '')}`);
    throw error;
  }
}
