import { type ChangedFile, diffLimits } from '@tether/protocol';
import type { CliContext } from '../cli-context.js';
import { fileNameOnOneLine, plural, terminalSafe } from '../render/human-renderer.js';
import { UsageError } from '../usage-error.js';
import { oneSessionId, parseDaemonCommand } from './daemon-options.js';
import { withLocalOrDaemon } from './local-or-daemon.js';
import { storeOption } from './store-option.js';

export const diffUsage = `usage: tether diff SESSION [--json] [--max-bytes N] [--server URL] [--data-dir DIR] [--store URL]
  A worktree session's work against the commit its branch started from: the changed files with
  their added/removed lines (on stderr), then git's unified diff (on stdout; binary files named,
  not shown), cut at --max-bytes (default 1 MiB, at most 16 MiB). --json prints the whole answer, the diff's bytes
  exactly. (Through the daemon if one runs, else the data dir.)`;

const statusLetter: Record<ChangedFile['status'], string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' };

function describeFile(file: ChangedFile): string {
  const name =
    file.previousPath === undefined
      ? fileNameOnOneLine(file.path)
      : `${fileNameOnOneLine(file.previousPath)} → ${fileNameOnOneLine(file.path)}`;
  const lines = file.binary ? 'binary' : `+${file.added ?? 0} −${file.removed ?? 0}`;
  return `  ${statusLetter[file.status]} ${name}  ${lines}`;
}

function parseMaxBytes(value: string | boolean | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value) || Number(value) < 1 || Number(value) > diffLimits.maxBytes)
    throw new UsageError(
      `--max-bytes takes a whole number of bytes from 1 to ${diffLimits.maxBytes} (${diffLimits.maxBytes / (1024 * 1024)} MiB), not "${String(value)}".`,
    );
  return Number(value);
}

/** `tether diff SESSION`: a worktree session's changed files and unified diff (from the daemon, or the data dir without one). */
export async function diffCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const command = parseDaemonCommand(argv, context, diffUsage, { 'max-bytes': { type: 'string' }, ...storeOption });
  const sessionId = oneSessionId(command.positionals, diffUsage);
  const maxBytes = parseMaxBytes(command.values['max-bytes']);
  const diff = await withLocalOrDaemon(command, context, (backend) =>
    backend.tether.getSessionDiff(sessionId, maxBytes === undefined ? {} : { maxBytes }),
  );
  if (command.values.json) {
    context.stdout.write(`${JSON.stringify(diff)}\n`);
    return 0;
  }
  const branch = diff.branch === null ? '' : ` on branch ${terminalSafe(diff.branch)}`;
  const changed = diff.files.length + (diff.moreFiles ?? 0);
  context.stderr.write(
    `${plural(changed, 'file')} changed${branch} since ${diff.baseCommit.slice(0, 12)}${changed > 0 ? ':' : ''}\n`,
  );
  for (const file of diff.files) context.stderr.write(`${describeFile(file)}\n`);
  if (diff.moreFiles !== undefined) context.stderr.write(`… and ${plural(diff.moreFiles, 'more file')}, not listed\n`);
  // The agent wrote these files: what reaches a terminal is stripped of control sequences. Anywhere else
  // (a file, a pipe into git apply) it is git's diff as it is, carriage returns and all, so the patch applies.
  context.stdout.write(context.stdoutIsTerminal ? terminalSafe(diff.diff) : diff.diff);
  if (diff.truncated)
    context.stderr.write(
      `(the diff was cut at ${maxBytes ?? diffLimits.defaultBytes} bytes; --max-bytes N shows more${diff.moreFiles === undefined ? ', and the file list above is whole' : ''})\n`,
    );
  return 0;
}
