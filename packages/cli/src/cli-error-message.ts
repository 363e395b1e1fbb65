import type { ErrorCode, ErrorDetails } from '@tether/protocol';

/** An error thrown (AgentError) or carried in an event (a run's end): what the wording reads of it. */
interface ShownError {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: ErrorDetails | undefined;
}
import { optionArguments } from './commands/parse-command-line.js';

/**
 * An error's message as a `tether` user needs it. The runtime and the daemon word their errors for
 * hosts of the API (open_session, interrupt_run, a commandId); the errors below get the same advice
 * in commands instead, chosen by their stable code and reason. The code itself is printed with every
 * message, so a script keeps what it matches on; anything not listed here is shown as it came.
 */
export function cliErrorMessage(error: ShownError, argv: readonly string[], command?: string): string {
  const session = argv.find((argument) => /^ses_[0-9a-f]{32}$/.test(argument)) ?? 'SESSION';
  // A run's own error names its run: the one to rewind to before.
  const run = argv.find((argument) => /^run_[0-9a-f]{32}$/.test(argument));
  const reason = error.details?.reason;
  switch (error.code) {
    case 'session_not_found':
      return `No session has that id here (in this data dir, or the daemon that serves it). \`tether sessions\` lists the sessions (add --data-dir DIR for another data dir's, --server URL for another daemon's); \`tether run "prompt"\` starts a new one.`;
    case 'session_closed':
      return `The session is closed. Continue it with \`tether run --resume ${session} "prompt"\`, which reopens it.`;
    case 'session_open':
      return `The session is still open. Close it with \`tether close ${session}\`, then delete it.`;
    case 'run_active':
      // A steer refused: the run takes none now, and the advice to give --steer would be no help.
      if (reason === 'control_active')
        return `${firstSentence(error.message)} \`tether send ${session} --queue "prompt"\` runs it once the control has ended.`;
      if (reason === 'run_stopping')
        return `The active run is being stopped, and a steer would go with it. \`tether send ${session} --queue "prompt"\` runs it once the run has ended (unless the stop cancels the queue), or send it again then.`;
      return `The session has an active run. Wait for it to end (\`tether attach ${session}\` follows it) or stop it (\`tether interrupt ${session}\`), then run this again.${command === 'send' || command === 'run' ? ' With tether send: --queue runs it as the next run, --steer hands it into the running turn.' : ''}`;
    case 'run_not_found': {
      const owner = error.details?.sessionId;
      if (reason === 'other_session' && owner !== undefined)
        return `That run is session ${owner}'s, not this session's (a fork shows the earlier turns of the session it was forked from). \`tether fork ${owner} --at ${run ?? 'RUN'}\` makes a new session from that point.`;
      return "The session has no run with that id. Each turn's run id (run_…) is on its run.started line in `tether run --json` or `tether send --json`.";
    }
    case 'workspace_has_changes':
      return reason === 'commits_beyond_base'
        ? `${firstSentence(error.message)} Merge them into that branch (or tag them) and delete again, or \`tether delete ${session} --discard-changes\` removes it and its branch.`
        : `${firstSentence(error.message)} Merge or copy what you want to keep, then \`tether delete ${session} --discard-changes\` removes it and its branch.`;
    case 'session_owned_elsewhere':
      // main adds the daemon's address and how to send the command there.
      return 'Another Tether process sharing this store drives this session. Run the command there, or here again once that process has stopped (this one then takes the session over).';
    case 'capacity_exceeded':
      return reason === 'open_session_limit'
        ? `${firstSentence(error.message)} Close sessions you no longer need (\`tether close SESSION\`; \`tether sessions --state idle\` lists candidates), or restart the daemon with a higher \`tether serve --max-open-sessions\`.`
        : error.message;
    case 'capability_unsupported':
      return reason === 'workspace_diff'
        ? `${firstSentence(error.message)} Start a session in a worktree of its own (\`tether run --worktree "prompt"\`, in the repository) to review its work with \`tether diff\`.`
        : error.message;
    case 'checkpoint_unavailable':
      if (hasOption(argv, '--at'))
        return `${firstSentence(error.message)} Fork at another run (--at RUN), or leave out --at to fork the whole conversation.`;
      if (hasOption(argv, '--files'))
        return `${firstSentence(error.message)} Rewind without --files, or to another run (--to RUN).`;
      return error.message;
    case 'input_not_queued':
      return reason === 'steered'
        ? `${firstSentence(error.message)} Stop the run with \`tether interrupt ${session}\` before the agent takes it in.`
        : error.message;
    case 'invalid_command':
      if (reason === 'command_id_reused')
        return 'This command was refused as a repeat of another one (tether makes a fresh id for each command, so this is a bug: please report it).';
      // The daemon's refusal names its API option (allowOrigins); tether serve's user gave the flag.
      if (reason === 'invalid_allowOrigins') return error.message.replace(/^allowOrigins: /, '--allow-origin ');
      // An input part's own message says which part, counted from 1, and what it needs.
      if (typeof reason === 'string' && reason.startsWith('input_part')) return error.message;
      return namedByOption(error, argv) ?? invalidFields(error.details?.issues) ?? error.message;
    case 'provider_api_error':
      return reason === 'plan_limit'
        ? error.message.replaceAll(
            '(cancel_queued_input)',
            `(\`tether cancel-input ${session} INPUT\`; \`tether show ${session}\` lists them)`,
          )
        : error.message
            .replaceAll(
              '(rewind_session)',
              run === undefined
                ? `(\`tether rewind ${session} --to RUN\` with this run's id, printed as run_… with --json)`
                : `(\`tether rewind ${session} --to ${run}\`)`,
            )
            .replaceAll('(set_model)', `(\`tether run --resume ${session} --model M "prompt"\` switches it)`);
    case 'budget_exceeded':
      return error.message.replaceAll('(fork_session:', `(\`tether fork ${session}\`:`);
    case 'runtime_stopped':
      // The client's advice names its own options (requestTimeoutMs), which a tether user cannot set.
      return reason === 'request_timeout'
        ? `${error.message.split(' Check that')[0]} Check that the daemon answers (\`tether doctor\` shows it; a daemon stopped with Ctrl-Z or SIGSTOP answers nothing), then run this again.`
        : error.message;
    default:
      return error.message;
  }
}

/** The command fields a tether option sets, by the path the runtime's schema names them with. */
const optionOfField: Readonly<Record<string, string>> = {
  'workspace.branch': '--branch',
  'workspace.baseRef': '--base',
  model: '--model',
  permissionMode: '--permission-mode',
};

/**
 * A command the runtime's schema refused lists the fields (the message's own advice is to send it
 * again with a new commandId, which tether does by itself): what the user can change is the option
 * or prompt a field came from, named when the fields are all options'. Undefined when the error
 * carries no such list.
 */
function invalidFields(issues: unknown): string | undefined {
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  const options = issues.map((issue: { path?: unknown }) => optionOfField[String(issue.path)]);
  if (options.every((option) => option !== undefined)) {
    const named = issues
      .slice(0, 3)
      .map((issue: { message?: unknown }, index) => `${options[index]}: ${String(issue.message)}`)
      .join('; ');
    return `${named}. Give ${options.length === 1 ? 'it' : 'them'} another value and run this again.`;
  }
  const listed = issues
    .slice(0, 3)
    .map((issue: { path?: unknown; message?: unknown }) => `${String(issue.path)}: ${String(issue.message)}`)
    .join('; ');
  return `Tether refused what this command sent (${listed}). Check the options and the prompt those fields come from, then run it again.`;
}

/** A message's first sentence: what happened, without the advice that follows it. */
function firstSentence(message: string): string {
  const end = message.search(/\.\s/);
  return end === -1 ? message : message.slice(0, end + 1);
}

function hasOption(argv: readonly string[], name: string): boolean {
  return optionArguments(argv).some((argument) => argument === name || argument.startsWith(`${name}=`));
}

/**
 * A refused input part (a missing file, a bad image) named by the option it came from, not by its
 * place in the turn ("Input part 2 of 2"), which the user never wrote: tether's turns are the
 * --image parts, the prompt, then the --file parts (turnInput).
 */
function namedByOption(error: ShownError, argv: readonly string[]): string | undefined {
  const index = error.details?.index;
  if (typeof index !== 'number' || !/^Input part \d+ of \d+/.test(error.message)) return undefined;
  const images = optionValues(argv, '--image');
  const files = optionValues(argv, '--file');
  const label =
    index < images.length
      ? `--image ${images[index]}`
      : index === images.length
        ? 'The prompt'
        : files[index - images.length - 1] === undefined
          ? undefined
          : `--file ${files[index - images.length - 1]}`;
  return label === undefined ? undefined : error.message.replace(/^Input part \d+ of \d+/, label);
}

/** Every value given to a repeatable option, in order (`--name VALUE` or `--name=VALUE`, before any `--`). */
function optionValues(argv: readonly string[], name: string): string[] {
  const values: string[] = [];
  const options = optionArguments(argv);
  for (let position = 0; position < options.length; position++) {
    const argument = options[position]!;
    if (argument === name && position + 1 < options.length) values.push(options[++position]!);
    else if (argument.startsWith(`${name}=`)) values.push(argument.slice(name.length + 1));
  }
  return values;
}

/**
 * A file or folder the operating system would not let this user read or write (a data dir of another
 * user's, one whose mode was changed): said as such, with what to do, rather than as Node's bare EACCES.
 */
export function permissionDenied(error: unknown): string | null {
  const { code, path: where } = (error ?? {}) as NodeJS.ErrnoException;
  if ((code !== 'EACCES' && code !== 'EPERM') || typeof where !== 'string') return null;
  return `permission denied on ${where}: this user (uid ${process.getuid?.() ?? '?'}) may not use it. Fix its permissions, or use a data dir of your own (--data-dir or TETHER_HOME).`;
}
