import type { AgentProviderV1FileRewind } from '@tether/provider-spec';
import type { ClaudeConnection } from '../connection/claude-connection.js';

type Refusal = 'checkpointing_off' | 'no_checkpoint';

const refusalMessages: Record<Refusal, string> = {
  checkpointing_off:
    'File checkpointing is off for this session (fileCheckpointing false), so the agent kept no copies of files to put back. Rewind without files.',
  no_checkpoint:
    'The agent kept no file checkpoint for that turn (its transcript does not have it). Rewind without files, or to another run.',
};

/** Nothing can be put back: the reason, in the agent-neutral words a host shows. */
export function cannotRewind(reason: Refusal): AgentProviderV1FileRewind {
  return { canRewind: false, reason, message: refusalMessages[reason], paths: [], insertions: 0, deletions: 0 };
}

interface DryRunAnswer {
  readonly canRewind?: unknown;
  readonly error?: unknown;
  readonly filesChanged?: unknown;
  readonly insertions?: unknown;
  readonly deletions?: unknown;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.trunc(value) : 0;
}

/** The agent's dry-run answer ({canRewind, filesChanged, …} or {canRewind:false, error}) as a neutral value. */
function toFileRewind(answer: DryRunAnswer | undefined): AgentProviderV1FileRewind {
  if (answer?.canRewind !== true) {
    // The agent's two refusals: checkpoints not enabled in that process, or none kept for that message.
    const off = typeof answer?.error === 'string' && /not enabled/i.test(answer.error);
    return cannotRewind(off ? 'checkpointing_off' : 'no_checkpoint');
  }
  const paths = Array.isArray(answer.filesChanged)
    ? answer.filesChanged.filter((path): path is string => typeof path === 'string')
    : [];
  return { canRewind: true, paths, insertions: count(answer.insertions), deletions: count(answer.deletions) };
}

/**
 * Puts files back as they were before the user message (or, dryRun, says what that would change).
 * A real rewind is preceded by its dry run: the agent refuses a real one with bare prose, and
 * reports only what the dry run counted, so that is what the result says.
 */
export async function rewindFiles(
  connection: ClaudeConnection,
  request: { readonly inputMessageId: string; readonly dryRun: boolean },
): Promise<AgentProviderV1FileRewind> {
  const preview = toFileRewind(
    (await connection.request({
      subtype: 'rewind_files',
      user_message_id: request.inputMessageId,
      dry_run: true,
    })) as DryRunAnswer | undefined,
  );
  if (request.dryRun || !preview.canRewind) return preview;
  await connection.request({ subtype: 'rewind_files', user_message_id: request.inputMessageId, dry_run: false });
  return preview;
}
