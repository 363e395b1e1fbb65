import { parseArgs } from 'node:util';
import { AgentError, exitCodeForCode } from '@tether/protocol';
import type { CliContext } from './cli-context.js';
import { cliErrorMessage, permissionDenied } from './cli-error-message.js';
import { notADirectory } from './data-dir-shape.js';
import { optionArguments } from './commands/parse-command-line.js';
import { UsageError } from './usage-error.js';
import { VERSION } from './version.js';

type Command = (argv: readonly string[], context: CliContext) => Promise<number>;

/** A command and its own help (`tether COMMAND --help`). */
interface LoadedCommand {
  readonly run: Command;
  readonly usage: string;
}

/**
 * Each command's modules, loaded only when it runs: a command pays for its own dependencies, not for
 * every other command's (the daemon's server, the store, both transports), before it starts.
 */
const commands: Record<string, () => Promise<LoadedCommand>> = {
  run: async () => {
    const { runCommand, runUsage } = await import('./commands/run-command.js');
    return { run: runCommand, usage: runUsage };
  },
  demo: async () => {
    const { demoCommand, demoUsage } = await import('./commands/demo-command.js');
    return { run: demoCommand, usage: demoUsage };
  },
  doctor: async () => {
    const { doctorCommand, doctorUsage } = await import('./commands/doctor-command.js');
    return { run: doctorCommand, usage: doctorUsage };
  },
  serve: async () => {
    const { serveCommand, serveUsage } = await import('./commands/serve-command.js');
    return { run: serveCommand, usage: serveUsage };
  },
  token: async () => {
    const { tokenCommand, tokenUsage } = await import('./commands/token-command.js');
    return { run: tokenCommand, usage: tokenUsage };
  },
  sessions: async () => {
    const { sessionsCommand, sessionsUsage } = await import('./commands/session-commands.js');
    return { run: sessionsCommand, usage: sessionsUsage };
  },
  show: async () => {
    const { showCommand, showUsage } = await import('./commands/session-commands.js');
    return { run: showCommand, usage: showUsage };
  },
  attach: async () => {
    const { attachCommand, attachUsage } = await import('./commands/attach-command.js');
    return { run: attachCommand, usage: attachUsage };
  },
  send: async () => {
    const { sendCommand, sendUsage } = await import('./commands/attach-command.js');
    return { run: sendCommand, usage: sendUsage };
  },
  interrupt: async () => {
    const { interruptCommand, interruptUsage } = await import('./commands/session-commands.js');
    return { run: interruptCommand, usage: interruptUsage };
  },
  'cancel-input': async () => {
    const { cancelInputCommand, cancelInputUsage } = await import('./commands/session-commands.js');
    return { run: cancelInputCommand, usage: cancelInputUsage };
  },
  close: async () => {
    const { closeCommand, closeUsage } = await import('./commands/session-commands.js');
    return { run: closeCommand, usage: closeUsage };
  },
  delete: async () => {
    const { deleteCommand, deleteUsage } = await import('./commands/session-commands.js');
    return { run: deleteCommand, usage: deleteUsage };
  },
  diff: async () => {
    const { diffCommand, diffUsage } = await import('./commands/diff-command.js');
    return { run: diffCommand, usage: diffUsage };
  },
  fork: async () => {
    const { forkCommand, forkUsage } = await import('./commands/conversation-commands.js');
    return { run: forkCommand, usage: forkUsage };
  },
  rewind: async () => {
    const { rewindCommand, rewindUsage } = await import('./commands/conversation-commands.js');
    return { run: rewindCommand, usage: rewindUsage };
  },
  models: async () => {
    const { modelsCommand, modelsUsage } = await import('./commands/models-command.js');
    return { run: modelsCommand, usage: modelsUsage };
  },
  acp: async () => {
    const { acpCommand, acpUsage } = await import('./commands/acp-command.js');
    return { run: acpCommand, usage: acpUsage };
  },
};

/** `tether --help`: the overview, then every command's own help (which loads every command). */
export async function mainUsage(): Promise<string> {
  const usages = Object.fromEntries(
    await Promise.all(Object.entries(commands).map(async ([name, load]) => [name, (await load()).usage] as const)),
  );
  return `tether ${VERSION}: drive Claude Code headlessly through one neutral protocol.

commands:
  tether demo       a scripted conversation through the real claude CLI and a built-in fake model
  tether run        one turn in a new or resumed session (through the local daemon if one runs)
  tether doctor     what Tether would run with, and what to fix
  tether serve      the daemon: HTTP + WebSocket API (docs/api.md)
  tether token      the daemon's token (--rotate replaces it)
  tether sessions   the sessions (the daemon's, or the data dir's when none runs); tether show SESSION for one
  tether attach     follow a session live and answer its prompts
  tether send       one turn in a daemon's session
  tether interrupt  stop a session's run; tether close SESSION closes it
  tether cancel-input  withdraw a follow-up queued with tether send --queue/--steer before it starts
  tether delete     a closed session and what is stored about it (its worktree too, if it holds no work)
  tether diff       a worktree session's changed files and diff against its base
  tether fork       a new session continuing a copy of a conversation (all of it, or up to a turn)
  tether rewind     a session's conversation (and files) back to just before a turn
  tether models     the models the agent offers
  tether acp        an Agent Client Protocol agent on stdin/stdout, for editors (docs/acp.md)

${usages.run}

${usages.demo}

${usages.doctor}

${usages.serve}

${usages.token}

${usages.sessions}
${usages.show}
${usages.attach}
${usages.send}
${usages.interrupt}
${usages['cancel-input']}
${usages.close}
${usages.delete}
${usages.diff}
${usages.fork}
${usages.rewind}

${usages.models}

${usages.acp}`;
}

/** Runs one `tether` invocation and returns its exit code. */
export async function main(argv: readonly string[], context: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  // `tether help run` is `tether run --help`.
  if (name === 'help' && rest.length === 1 && Object.hasOwn(commands, rest[0]!)) {
    context.stdout.write(`${(await commands[rest[0]!]!()).usage}\n`);
    return 0;
  }
  if (name === 'help' && rest.length > 0) {
    context.stderr.write(
      Object.hasOwn(commands, rest[0]!)
        ? `tether help takes one command name: tether help ${rest[0]}.\n`
        : `tether help: no command "${rest.join(' ')}". Commands: ${Object.keys(commands).join(', ')} (tether --help).\n`,
    );
    return 2;
  }
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? context.stderr : context.stdout).write(`${await mainUsage()}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === 'version' || name === '-v') {
    context.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // Own keys only: "valueOf" or "constructor" would find Object.prototype's members.
  const load = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!load) {
    context.stderr.write(
      `tether: unknown command "${name}". Commands: ${Object.keys(commands).join(', ')} (tether --help).\n`,
    );
    return 2;
  }
  const command = await load();
  if (asksForHelp(rest)) {
    context.stdout.write(`${command.usage}\n`);
    return 0;
  }
  try {
    if (name !== 'demo' && name !== 'doctor') await checkDataDir(rest, context);
    return await command.run(rest, context);
  } catch (error) {
    // With --json, a script reads the error too: one JSON line on stderr, its code stable (a usage
    // error is invalid_command), stdout left to the events.
    const json = optionArguments(rest).includes('--json');
    if (error instanceof UsageError) {
      // Without the usage text some refusals add after a blank line (--help prints that).
      const message = error.message.split('\n\n')[0];
      if (json)
        writeJsonError(context, { code: 'invalid_command', message, retryable: false, details: { reason: 'usage' } });
      else context.stderr.write(`tether ${name}: ${error.message}\n`);
      return 2;
    }
    if (AgentError.isInstance(error)) {
      const message = `${cliErrorMessage(error, rest, name)}${tokenSourceNote(error, context)}`;
      if (json) writeJsonError(context, { ...error.toObject(), message });
      else context.stderr.write(`tether ${name}: ${message} [${error.code}]\n${ownerHint(error)}`);
      return exitCodeForCode(error.code);
    }
    const denied = permissionDenied(error);
    const unexpected = `unexpected failure: ${(error as Error)?.message ?? String(error)}`;
    if (json)
      writeJsonError(context, {
        code: 'internal_error',
        message: denied ?? unexpected,
        retryable: false,
        details: { reason: denied === null ? 'unexpected' : 'permission_denied' },
      });
    else context.stderr.write(`tether ${name}: ${denied ?? unexpected}\n`);
    return 1;
  }
}

function writeJsonError(context: CliContext, error: Record<string, unknown>): void {
  context.stderr.write(`${JSON.stringify({ error })}\n`);
}

/** `--help` or `-h` anywhere among a command's options (not after `--`, where a prompt may say it). */
function asksForHelp(argv: readonly string[]): boolean {
  const options = optionArguments(argv);
  return options.includes('--help') || options.includes('-h');
}

/**
 * Every command but demo (which makes its own) finds its data dir the same way: --data-dir, else
 * TETHER_HOME, else ~/.tether. One that exists and is not a directory would fail each of them
 * somewhere inside (reading daemon.json, taking the lock) with a bare ENOTDIR: it is refused here,
 * once, before anything is touched. Doctor reports it as one of its rows instead.
 */
async function checkDataDir(argv: readonly string[], context: CliContext): Promise<void> {
  // Lenient: the command's own strict parse reports malformed arguments, with its usage.
  const { values } = parseArgs({
    args: [...argv],
    strict: false,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' } },
  });
  const option = values['data-dir'];
  if (option === true) return;
  const { resolveDataDir } = await import('@tether/store-sqlite');
  const given = typeof option === 'string' ? option : undefined;
  const dataDir = resolveDataDir({ dataDir: given, environment: context.environment, cwd: context.cwd });
  const what = await notADirectory(dataDir);
  if (what === null) return;
  const from = given !== undefined ? '--data-dir' : context.environment.TETHER_HOME ? 'TETHER_HOME' : 'the default';
  throw new UsageError(
    `the data dir ${dataDir} (${from}) ${what}: remove the file, or point --data-dir or TETHER_HOME at a directory.`,
  );
}

/**
 * A token the daemon refused that came from TETHER_TOKEN (which wins over the data dir's file, for
 * the local daemon too): `tether token` shows the file's, not the one that was sent, so say which.
 */
function tokenSourceNote(error: AgentError, context: CliContext): string {
  if (error.code !== 'unauthorized' || !context.environment.TETHER_TOKEN) return '';
  return " But the token sent was TETHER_TOKEN's, which wins over the data dir's: set TETHER_TOKEN to this daemon's token, or unset it to use the data dir's.";
}

/**
 * For a command refused because another daemon sharing the store drives the session: how to send it
 * there (the refused command left no trace, so sending it again is safe).
 */
function ownerHint(error: AgentError): string {
  const ownerUrl = error.details?.ownerUrl;
  if (error.code !== 'session_owned_elsewhere' || typeof ownerUrl !== 'string') return '';
  return `  the daemon driving this session is at ${ownerUrl}: run the command again with --server ${ownerUrl} (and that daemon's token in TETHER_TOKEN)\n`;
}
