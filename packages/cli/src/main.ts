import { AgentError, exitCodeForCode } from '@tether/protocol';
import type { CliContext } from './cli-context.js';
import { acpCommand, acpUsage } from './commands/acp-command.js';
import { demoCommand, demoUsage } from './commands/demo-command.js';
import { doctorCommand, doctorUsage } from './commands/doctor-command.js';
import { attachCommand, attachUsage, sendCommand, sendUsage } from './commands/attach-command.js';
import { runCommand, runUsage } from './commands/run-command.js';
import { forkCommand, forkUsage, rewindCommand, rewindUsage } from './commands/conversation-commands.js';
import { modelsCommand, modelsUsage } from './commands/models-command.js';
import { serveCommand, serveUsage } from './commands/serve-command.js';
import { diffCommand, diffUsage } from './commands/diff-command.js';
import {
  closeCommand,
  closeUsage,
  deleteCommand,
  deleteUsage,
  interruptCommand,
  interruptUsage,
  sessionsCommand,
  sessionsUsage,
  showCommand,
  showUsage,
} from './commands/session-commands.js';
import { tokenCommand, tokenUsage } from './commands/token-command.js';
import { UsageError } from './usage-error.js';
import { VERSION } from './version.js';

const commands: Record<string, (argv: readonly string[], context: CliContext) => Promise<number>> = {
  run: runCommand,
  demo: demoCommand,
  doctor: doctorCommand,
  serve: serveCommand,
  token: tokenCommand,
  sessions: sessionsCommand,
  show: showCommand,
  attach: attachCommand,
  send: sendCommand,
  interrupt: interruptCommand,
  close: closeCommand,
  delete: deleteCommand,
  diff: diffCommand,
  fork: forkCommand,
  rewind: rewindCommand,
  models: modelsCommand,
  acp: acpCommand,
};

/** Each command's own help, shown by `tether COMMAND --help`. */
const commandUsages: Record<string, string> = {
  run: runUsage,
  demo: demoUsage,
  doctor: doctorUsage,
  serve: serveUsage,
  token: tokenUsage,
  sessions: sessionsUsage,
  show: showUsage,
  attach: attachUsage,
  send: sendUsage,
  interrupt: interruptUsage,
  close: closeUsage,
  delete: deleteUsage,
  diff: diffUsage,
  fork: forkUsage,
  rewind: rewindUsage,
  models: modelsUsage,
  acp: acpUsage,
};

export const mainUsage = `tether ${VERSION}: drive Claude Code headlessly through one neutral protocol.

commands:
  tether demo       a scripted conversation through the real claude CLI and a built-in fake model
  tether run        one turn in a new or resumed session (through the local daemon if one runs)
  tether doctor     what Tether would run with, and what to fix
  tether serve      the daemon: HTTP + WebSocket API (docs/api.md)
  tether token      the daemon's token (--rotate replaces it)
  tether sessions   the daemon's sessions; tether show SESSION for one
  tether attach     follow a session live and answer its prompts
  tether send       one turn in a daemon's session
  tether interrupt  stop a session's run; tether close SESSION closes it
  tether delete     a closed session and what is stored about it (its worktree too, if it holds no work)
  tether diff       a worktree session's changed files and diff against its base
  tether fork       a new session continuing a copy of a conversation (all of it, or up to a turn)
  tether rewind     a session's conversation (and files) back to just before a turn
  tether models     the models the agent offers
  tether acp        an Agent Client Protocol agent on stdin/stdout, for editors (docs/acp.md)

${runUsage}

${demoUsage}

${doctorUsage}

${serveUsage}

${tokenUsage}

${sessionsUsage}
${showUsage}
${attachUsage}
${sendUsage}
${interruptUsage}
${closeUsage}
${deleteUsage}
${diffUsage}
${forkUsage}
${rewindUsage}

${modelsUsage}

${acpUsage}`;

/** Runs one `tether` invocation and returns its exit code. */
export async function main(argv: readonly string[], context: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? context.stderr : context.stdout).write(`${mainUsage}\n`);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === 'version') {
    context.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    context.stderr.write(
      `tether: unknown command "${name}". Commands: ${Object.keys(commands).join(', ')} (tether --help).\n`,
    );
    return 2;
  }
  if (rest[0] === '--help' || rest[0] === '-h') {
    context.stdout.write(`${commandUsages[name]}\n`);
    return 0;
  }
  try {
    return await command(rest, context);
  } catch (error) {
    if (error instanceof UsageError) {
      context.stderr.write(`tether ${name}: ${error.message}\n`);
      return 2;
    }
    if (AgentError.isInstance(error)) {
      context.stderr.write(`tether ${name}: ${error.message} [${error.code}]\n`);
      return exitCodeForCode(error.code);
    }
    context.stderr.write(`tether ${name}: unexpected failure: ${(error as Error)?.message ?? String(error)}\n`);
    return 1;
  }
}
