import { AgentError, type RewindSessionCommand, type RewindSessionReceipt, type RestoredFiles } from '@tether/protocol';
import type { AgentProviderV1FileRewind } from '@tether/provider-spec';
import {
  type ConversationCopy,
  type DeletedForkSource,
  continueFrom,
  cutAfterLastCheckpoint,
  decideRewind,
  runsBeforeFork,
  runsContinuedBy,
  runsInConversation,
} from '../../state/conversation-branches.js';
import type { SessionRecord, TetherStore } from '../../store/tether-store.js';
import { branchEvents, compactedRuns, controlRuns } from './branch-events.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import { namingTheRunsSession } from './run-of-another-session.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** A fork of a fork that had no turn yet inherits its source's origin: followed this many steps at most. */
const forkDepthLimit = 100;

/**
 * Where a fork's conversation was copied from, read back from its source's log: the run it was
 * forked at, or the last run its source's conversation held then (through a source that was itself
 * a fork with no turn yet). Null for a session that is no fork, or a source that had no conversation;
 * the deleted source, when it is no longer known.
 */
async function forkOrigin(
  store: TetherStore,
  record: SessionRecord,
): Promise<ConversationCopy | DeletedForkSource | null> {
  let fork: Pick<SessionRecord, 'sessionId' | 'forkedFrom'> = record;
  for (let depth = 0; depth < forkDepthLimit && fork.forkedFrom; depth++) {
    const { sessionId: sourceId, runId } = fork.forkedFrom;
    const source = await store.getSession(sourceId);
    if (!source) return { deletedSource: sourceId };
    const runs = await store.listRuns(sourceId);
    if (runId !== null) return cutAfterLastCheckpoint([runId], runs)?.copy ?? null;
    const cut = cutAfterLastCheckpoint(runsBeforeFork(await branchEvents(store, sourceId), fork.sessionId), runs);
    if (cut) return cut.copy;
    fork = source;
  }
  return null;
}

function rewindFilesUnsupported(provider: string): AgentError {
  return new AgentError({
    code: 'capability_unsupported',
    message: `The ${provider} provider cannot put a workspace's files back (rewind with files); rewind without files.`,
    details: { reason: 'rewind_files' },
  });
}

const fileRewindAdvice = 'Rewind without files, or to another run.';

function refusedFileRewind(rewind: AgentProviderV1FileRewind): AgentError {
  // The agent's words are a sentence of their own, and may already say what to do.
  const why = rewind.message?.trim().replace(/\.+$/, '');
  const advice = why && /rewind without files/i.test(why) ? '' : ` ${fileRewindAdvice}`;
  return new AgentError({
    code: 'checkpoint_unavailable',
    message: `The agent cannot put the files back for that run${why ? `: ${why}` : ''}.${advice}`,
    details: { reason: rewind.reason ?? 'no_checkpoint' },
  });
}

/**
 * The conversation goes back to just before a run: recorded, then the agent is stopped so the next
 * turn starts a process from the cut point (the agent's transcript is never changed, so earlier
 * forks and rewinds stay valid). With files, the agent first puts the workspace's files back.
 */
export async function rewindSession(
  context: CommandContext,
  command: RewindSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<RewindSessionReceipt> {
  return namingTheRunsSession(context.store, command.sessionId, command.toRunId, () =>
    rewindTo(context, command, fingerprint),
  );
}

async function rewindTo(
  context: CommandContext,
  command: RewindSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<RewindSessionReceipt> {
  const found = context.entries.get(command.sessionId);
  if (found) {
    requireCapability(found.provider, (can) => can.rewind, 'rewind a conversation', 'rewind');
    if (command.files) {
      requireCapability(
        found.provider,
        (can) => can.rewindFiles,
        "put a workspace's files back (rewind with files); rewind without files",
        'rewind_files',
      );
    }
  }
  const runs = found ? await context.store.listRuns(command.sessionId) : [];
  const events = found ? await branchEvents(context.store, command.sessionId) : [];
  const continued = runsContinuedBy(events, command.toRunId);
  const conversation = runsInConversation(events);
  const compacted = compactedRuns(events);
  const controls = controlRuns(events);
  const origin = found ? await forkOrigin(context.store, found.record) : null;
  const decide = () => {
    const current = context.entries.get(command.sessionId);
    return accepted(
      current,
      decideRewind(current?.record, command, { runs, continued, origin, conversation, compacted, controls }),
    );
  };
  let { entry, decision } = decide();
  let files: RestoredFiles | null = null;
  if (decision.fileRewindMessageId !== null) {
    const session = await context.providerSession(entry);
    // A provider that declares rewindFiles without the method is refused like one that does not declare it.
    if (!session.doRewindFiles) throw rewindFilesUnsupported(entry.record.provider);
    const request = { inputMessageId: decision.fileRewindMessageId };
    const dryRun = await session.doRewindFiles({ ...request, dryRun: true });
    if (!dryRun.canRewind) throw refusedFileRewind(dryRun);
    // A turn submitted while the agent was asked must not have its files changed under it.
    ({ entry, decision } = decide());
    const done = await session.doRewindFiles({ ...request, dryRun: false });
    if (!done.canRewind) throw refusedFileRewind(done);
    files = { paths: [...done.paths], insertions: done.insertions, deletions: done.deletions };
  }
  const receipt: RewindSessionReceipt = {
    type: 'rewind_session',
    commandId: command.commandId,
    sessionId: command.sessionId,
    toRunId: command.toRunId,
    files,
  };
  const bodies = decision.events.map((event) => (event.type === 'session.rewound' ? { ...event, files } : event));
  const cut = decision.copyConversation;
  await context.writeTogether([{ entry, bodies, amend: (record) => continueFrom(record, cut) }], receipt, fingerprint);
  // The running agent holds the turns after the cut in its context: the next turn starts a new one.
  await context.stopProcess(entry, 'release');
  return receipt;
}
