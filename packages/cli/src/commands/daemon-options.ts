import { terminalSafe } from '../render/human-renderer.js';
import type { ParseArgsConfig } from 'node:util';
import type { TetherClient } from '@tether/client';
import { resolveDataDir } from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { requireDaemon } from '../connect-daemon.js';
import { UsageError } from '../usage-error.js';
import { parseCommandLine } from './parse-command-line.js';

type OptionSpec = ParseArgsConfig['options'];

export interface ParsedDaemonCommand {
  readonly values: Record<string, string | boolean | string[] | undefined>;
  readonly positionals: string[];
  readonly dataDir: string;
  readonly server: string | undefined;
}

/** Parses a daemon command's arguments (adding --server, --data-dir, --json). */
export function parseDaemonCommand<Extra extends OptionSpec>(
  argv: readonly string[],
  context: CliContext,
  usage: string,
  extra: Extra = {} as Extra,
): ParsedDaemonCommand {
  const parsed = parseCommandLine(
    argv,
    {
      allowPositionals: true,
      options: {
        server: { type: 'string' },
        'data-dir': { type: 'string' },
        json: { type: 'boolean', default: false },
        ...extra,
      },
    },
    usage,
  );
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const dataDirOption = values['data-dir'];
  const dataDir = resolveDataDir({
    dataDir: typeof dataDirOption === 'string' ? dataDirOption : undefined,
    environment: context.environment,
    cwd: context.cwd,
  });
  const server = typeof values.server === 'string' ? values.server : undefined;
  return { values, positionals: parsed.positionals, dataDir, server };
}

/**
 * The daemon of a parsed command (one is required). Its event streams say on stderr when the
 * daemon stops answering, and when it answers again.
 */
export function connectToDaemon(command: ParsedDaemonCommand, context: CliContext): Promise<TetherClient> {
  return requireDaemon({
    server: command.server,
    dataDir: command.dataDir,
    environment: context.environment,
    notices: context.stderr,
  });
}

export function oneSessionId(positionals: readonly string[], usage: string): string {
  if (positionals.length === 1 && !/^ses_[0-9a-f]{32}$/.test(positionals[0]!))
    throw new UsageError(
      `"${terminalSafe(positionals[0]!.slice(0, 100))}" is not a Tether session id (it looks like ses_ followed by 32 hex digits; tether sessions lists them).\n\n${usage}`,
    );
  if (positionals.length !== 1) throw new UsageError(`Give one session id (ses_…).\n\n${usage}`);
  return positionals[0]!;
}
