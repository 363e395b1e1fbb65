import { InputId, SessionState, type SessionSnapshot, agentDirectory, worktreeAfterDelete } from '@tether/protocol';
import type { CliContext } from '../cli-context.js';
import { followUpColumns } from '../render/follow-up-summary.js';
import { fileNameOnOneLine, formatUsage, plural, terminalSafe } from '../render/human-renderer.js';
import { describeWorktree, worktreeColumns } from '../render/workspace-summary.js';
import { UsageError } from '../usage-error.js';
import { connectToDaemon, oneSessionId, parseDaemonCommand } from './daemon-options.js';
import { withLocalOrDaemon } from './local-or-daemon.js';
import { storeOption } from './store-option.js';

const common = '[--server URL] [--data-dir DIR]';
// --store URL: where the sessions are when no daemon runs (docs/store-postgres.md).
const local = `${common} [--store URL]`;
export const sessionsUsage = `usage: tether sessions [--json] [--state idle|running|waiting|closed] ${local}
  (from the daemon if one runs, else from the data dir itself)`;
export const showUsage = `usage: tether show SESSION [--json] ${local}`;
export const interruptUsage = `usage: tether interrupt SESSION [--cancel-queued] [--json] ${common}
  Stops the session's active run. Follow-ups queued with tether send --queue then run next, in
  order; --cancel-queued cancels them instead. Steered ones not yet taken in are cancelled either way.`;
export const cancelInputUsage = `usage: tether cancel-input SESSION INPUT [--json] ${common}
  Withdraws a follow-up (inp_…, from tether send's output or tether show) before it starts or, for
  a steered one, before the agent took it in (input_not_queued, exit 1, once it has).`;
export const closeUsage = `usage: tether close SESSION [--json] ${local}
  Closes the session (its agent stops; reopen it with tether run --resume). A worktree that holds
  no work is removed with its branch; one with changes or commits is kept, and this says where;
  one git cannot read is left as it is, and this says so. (Through the daemon if one runs, else
  the data dir.)`;
export const deleteUsage = `usage: tether delete SESSION [--discard-changes] [--json] ${local}
  Deletes a closed session and everything Tether stored about it (close it first; the agent's own
  transcript, e.g. under ~/.claude/projects, stays: see docs/security.md). Its worktree goes too
  when it holds no work; one with uncommitted changes or commits beyond its base is refused (exit 1)
  unless --discard-changes, which removes the worktree and its branch with the work in them.
  (Through the daemon if one runs, else the data dir.)`;

/**
 * The title and a gap; '' without one. Quoted, so it reads apart from the path after it, and with its
 * terminal controls made inert: it is whatever text the first turn held.
 */
function titleColumn(session: SessionSnapshot): string {
  return session.title === null ? '' : `${JSON.stringify(terminalSafe(session.title))}  `;
}

function describe(session: SessionSnapshot): string {
  const waiting =
    session.pendingInteractions.length > 0 ? ` · ${session.pendingInteractions.length} waiting for you` : '';
  const lastRun = session.lastRun ? ` · last run ${session.lastRun.outcome}` : '';
  return `${session.sessionId}  ${session.state.padEnd(7)}  ${session.updatedAt}  ${titleColumn(session)}${fileNameOnOneLine(agentDirectory(session.workspace, session.workspaceStatus))}${worktreeColumns(session.workspaceStatus)}${session.model ? ` · ${session.model}` : ''}${session.permissionMode ? ` · ${session.permissionMode}` : ''}${session.forkedFrom ? ` · fork of ${session.forkedFrom.sessionId}` : ''} · ${formatUsage(session.usage)}${lastRun}${followUpColumns(session)}${waiting}`;
}

/** `tether sessions`: the sessions (the daemon's, or the data dir's without one), waiting-for-you first, then newest first. */
export async function sessionsCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, sessionsUsage, { state: { type: 'string' }, ...storeOption });
  const { values } = command;
  if (command.positionals.length > 0)
    throw new UsageError(
      `tether sessions takes no arguments (for one session: tether show SESSION).\n\n${sessionsUsage}`,
    );
  const state = values.state === undefined ? undefined : SessionState.safeParse(values.state);
  if (state && !state.success) throw new UsageError(`--state takes ${SessionState.options.join(', ')}.`);
  const sessions = await withLocalOrDaemon(command, context, (backend) =>
    backend.listAllSessions(state?.success ? { state: state.data } : {}),
  );
  const ordered = [...sessions].sort((a, b) => Number(b.state === 'waiting') - Number(a.state === 'waiting'));
  if (values.json) {
    context.stdout.write(`${JSON.stringify(ordered)}\n`);
    return 0;
  }
  if (ordered.length === 0) context.stderr.write('No sessions.\n');
  for (const session of ordered) context.stdout.write(`${describe(session)}\n`);
  return 0;
}

/** `tether show SESSION`: one session's snapshot (from the daemon, or the data dir without one). */
export async function showCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, showUsage, storeOption);
  const { values, positionals } = command;
  const sessionId = oneSessionId(positionals, showUsage);
  const session = await withLocalOrDaemon(command, context, (backend) => backend.tether.getSession(sessionId));
  if (values.json) {
    context.stdout.write(`${JSON.stringify(session)}\n`);
    return 0;
  }
  context.stdout.write(`${describe(session)}\n`);
  const worktree = describeWorktree(session.workspaceStatus);
  if (worktree !== null) context.stdout.write(`  ${worktree}\n`);
  if (session.activeRunId) context.stdout.write(`  active run: ${session.activeRunId}\n`);
  for (const interaction of session.pendingInteractions) {
    const what =
      interaction.request.kind === 'approval'
        ? `approval for ${terminalSafe(interaction.request.toolName)}`
        : `${interaction.request.questions.length} question(s)`;
    context.stdout.write(`  waiting: ${what} (ref ${interaction.interactionRef})\n`);
  }
  for (const queued of session.queuedInputs) {
    const held = queued.held ? ` (held by the plan limit until ${queued.held.until})` : '';
    const how = queued.delivery === 'after_turn' ? `queued as ${queued.runId}${held}` : `steered into ${queued.runId}`;
    const preview = queued.preview === null ? '(redacted)' : JSON.stringify(terminalSafe(queued.preview));
    context.stdout.write(`  ${how}: ${queued.inputId} ${preview}\n`);
  }
  return 0;
}

/** `tether interrupt SESSION [--cancel-queued]`: stops the session's active run (and its queued follow-ups). */
export async function interruptCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, interruptUsage, {
    'cancel-queued': { type: 'boolean', default: false },
  });
  const { values } = command;
  const sessionId = oneSessionId(command.positionals, interruptUsage);
  const cancelQueued = values['cancel-queued'] === true;
  // Only once the arguments are sound: a mistake in them is told whether or not a daemon runs.
  const client = await connectToDaemon(command, context);
  // What there was to cancel, so the line says what happened rather than what was asked.
  const before = await client.getSession(sessionId);
  const receipt = await client.interruptRun({ sessionId, ...(cancelQueued ? { cancelQueued } : {}) });
  if (values.json) {
    context.stdout.write(`${JSON.stringify(receipt)}\n`);
    return 0;
  }
  // Only follow-ups waiting for a run of their own: a steer belongs to the run being stopped, which
  // withdraws it (if the agent has not taken it in) with or without --cancel-queued.
  const waiting = (before.queuedInputs ?? []).filter((input) => input.delivery === 'after_turn').length;
  const queued = cancelQueued ? waiting : 0;
  const cancelled = queued === 0 ? '' : `${plural(queued, 'queued follow-up')} cancelled`;
  // Kept, they start once the run has stopped: said, so an interrupt is not taken for the end of the work.
  const kept =
    cancelQueued || waiting === 0
      ? ''
      : `; ${plural(waiting, 'queued follow-up')} ${waiting === 1 ? 'starts next (tether cancel-input withdraws it)' : 'start next, in order (tether cancel-input withdraws one)'}`;
  if (before.state === 'closed') context.stderr.write('the session is closed: nothing was running or queued\n');
  else if (receipt.runId)
    context.stderr.write(`stopping run ${receipt.runId}${cancelled ? `; ${cancelled}` : ''}${kept}\n`);
  else context.stderr.write(`nothing was running${cancelled ? `; ${cancelled}` : cancelQueued ? ' or queued' : ''}\n`);
  return 0;
}

/** `tether cancel-input SESSION INPUT`: withdraws a queued follow-up before it starts. */
export async function cancelInputCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, cancelInputUsage);
  const { values, positionals } = command;
  const [sessionId, inputId] = positionals;
  if (positionals.length !== 2)
    throw new UsageError(`Give a session id (ses_…) and an input id (inp_…).\n\n${cancelInputUsage}`);
  if (!InputId.safeParse(inputId).success)
    throw new UsageError(
      `${JSON.stringify(inputId)} is not an input id (inp_ and 32 hex digits): tether show SESSION lists the session's queued ones with theirs.`,
    );
  oneSessionId([sessionId!], cancelInputUsage);
  // Only once the arguments are sound: a mistake in them is told whether or not a daemon runs.
  const client = await connectToDaemon(command, context);
  const receipt = await client.cancelQueuedInput({ sessionId: sessionId!, inputId: inputId! });
  if (values.json) context.stdout.write(`${JSON.stringify(receipt)}\n`);
  else context.stderr.write(`withdrew ${receipt.inputId}\n`);
  return 0;
}

/** `tether close SESSION`: closes the session (its process ends; reopen with run --resume), through the daemon or, without one, the data dir. */
export async function closeCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, closeUsage, storeOption);
  const sessionId = oneSessionId(command.positionals, closeUsage);
  const closed = await withLocalOrDaemon(command, context, async ({ tether }) => {
    await tether.closeSession({ sessionId });
    return tether.getSession(sessionId);
  });
  const status = closed.workspaceStatus;
  if (command.values.json) {
    context.stdout.write(`${JSON.stringify({ sessionId, state: closed.state, workspaceStatus: status })}\n`);
    return 0;
  }
  if (status?.worktree && status.state === 'ready') {
    // The release failed (a diagnostic, no text): the worktree stays as it was, and this must not read as if all went well.
    context.stderr.write(
      `closed; the worktree ${fileNameOnOneLine(status.worktree.path)} on branch ${terminalSafe(status.worktree.branch)} was left as it is: Tether could not check it for work, so it removed nothing (tether diff ${sessionId} shows git's error). Fix that, then tether close or tether delete releases it.\n`,
    );
    return 0;
  }
  const worktree = describeWorktree(status);
  context.stderr.write(worktree === null ? 'closed\n' : `closed; ${worktree}\n`);
  return 0;
}

/** `tether delete SESSION [--discard-changes]`: a closed session and what is stored about it, its worktree too when it holds no work. */
export async function deleteCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, deleteUsage, {
    'discard-changes': { type: 'boolean', default: false },
    ...storeOption,
  });
  const sessionId = oneSessionId(command.positionals, deleteUsage);
  const discardWorkspaceChanges = command.values['discard-changes'] === true;
  const { before, deleted } = await withLocalOrDaemon(command, context, async (backend) => {
    const snapshot = await backend.tether.getSession(sessionId);
    // A refusal (still open, work in the worktree) is worded for the CLI where every error is (cli-error-message.ts).
    return {
      before: snapshot.workspaceStatus,
      deleted: await backend.tether.deleteSession(sessionId, { discardWorkspaceChanges }),
    };
  });
  if (command.values.json) {
    context.stdout.write(`${JSON.stringify(deleted)}\n`);
    return 0;
  }
  const after = deleted.workspaceStatus;
  context.stderr.write(
    `deleted ${sessionId}${worktreeAfterDelete(before, after, { path: fileNameOnOneLine, branch: terminalSafe })}\n`,
  );
  return 0;
}
