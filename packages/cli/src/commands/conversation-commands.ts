import { RunId } from '@tether/protocol';
import type { CliContext } from '../cli-context.js';
import { fileNameOnOneLine } from '../render/human-renderer.js';
import { UsageError } from '../usage-error.js';
import { oneSessionId, parseDaemonCommand } from './daemon-options.js';
import { withLocalOrDaemon } from './local-or-daemon.js';
import { storeOption } from './store-option.js';
import { closeReopened } from './session-cleanup.js';

const common = '[--json] [--server URL] [--data-dir DIR] [--store URL]';
export const forkUsage = `usage: tether fork SESSION [--at RUN] ${common}
  A new session continuing a copy of SESSION's conversation: all of it, or up to and including
  the turn RUN (a run id from tether show/--json). The original is untouched. Prints the new
  session's id; --json prints the receipt. (Through the daemon if one runs, else the data dir.)`;
export const rewindUsage = `usage: tether rewind SESSION --to RUN [--files] ${common}
  The conversation continues from just before the turn RUN (it and later turns leave the agent's
  context; the log keeps them). --files also puts back the workspace files the agent edited since
  then (file checkpointing must be on). --json prints the receipt.`;

function runIdOption(value: unknown, option: string, usage: string): string {
  if (typeof value !== 'string') throw new UsageError(`${option} RUN is required.\n\n${usage}`);
  if (!RunId.safeParse(value).success)
    throw new UsageError(`"${value}" is not a Tether run id (it looks like run_ followed by 32 hex digits).`);
  return value;
}

/** `tether fork SESSION [--at RUN]`: a new session with a copy of the conversation. */
export async function forkCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, forkUsage, { at: { type: 'string' }, ...storeOption });
  const sessionId = oneSessionId(command.positionals, forkUsage);
  const atRunId = command.values.at === undefined ? undefined : runIdOption(command.values.at, '--at', forkUsage);
  const receipt = await withLocalOrDaemon(command, context, (backend) =>
    backend.tether.forkSession({ sessionId, ...(atRunId ? { atRunId } : {}) }),
  );
  if (command.values.json) {
    context.stdout.write(`${JSON.stringify(receipt)}\n`);
    return 0;
  }
  context.stdout.write(`${receipt.forkSessionId}\n`);
  const where = receipt.atRunId ? ` at ${receipt.atRunId}` : '';
  context.stderr.write(
    `forked ${sessionId}${where} into ${receipt.forkSessionId} (the original is untouched)\ncontinue it: tether run --resume ${receipt.forkSessionId} "prompt"\n`,
  );
  return 0;
}

/** `tether rewind SESSION --to RUN [--files]`: the conversation (and the files) back to before a turn. */
export async function rewindCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, rewindUsage, {
    to: { type: 'string' },
    files: { type: 'boolean', default: false },
    ...storeOption,
  });
  const sessionId = oneSessionId(command.positionals, rewindUsage);
  const toRunId = runIdOption(command.values.to, '--to', rewindUsage);
  const files = command.values.files === true;
  const receipt = await withLocalOrDaemon(command, context, async ({ tether }) => {
    const rewind = () => tether.rewindSession({ sessionId, toRunId, ...(files ? { files } : {}) });
    if ((await tether.getSession(sessionId)).state !== 'closed') return rewind();
    // A rewind takes an open session: a closed one is reopened for it and closed again, as it was left
    // (without it, the way there was a turn sent into the conversation the user meant to rewind).
    await tether.openSession({ continueSession: sessionId });
    try {
      return await rewind();
    } finally {
      await closeReopened(tether, sessionId);
    }
  });
  if (command.values.json) {
    context.stdout.write(`${JSON.stringify(receipt)}\n`);
    return 0;
  }
  context.stdout.write(`rewound ${sessionId} to just before ${receipt.toRunId}: the next turn continues from there\n`);
  if (receipt.files) {
    const { paths, insertions, deletions } = receipt.files;
    context.stdout.write(
      paths.length === 0
        ? 'no files needed restoring\n'
        : `restored ${paths.length} file${paths.length === 1 ? '' : 's'} (+${insertions} −${deletions}):\n`,
    );
    for (const restored of paths) context.stdout.write(`  ${fileNameOnOneLine(restored)}\n`);
  }
  return 0;
}
